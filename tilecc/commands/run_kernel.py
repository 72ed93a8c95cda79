"""`tilecc run kernel.py:fn --input NAME=a.npy ... --out DIR`: run an NKI kernel written in
Python end to end (argument parsing: tilecc/commands/run.py).

Contract: traces the function with the inputs, lowers the KLR to BIR, verifies it,
simulates it and writes DIR/<output>.npy for every tensor the kernel returns (DIR is
created if missing; each file is written atomically). Prints one line per output.
`--html R.html` writes the kernel report page and `--check` compares with the KLR reference
interpreter (exit 2 on a difference): tilecc.viz.kernel_report.
"""

from __future__ import annotations

import argparse


from tilecc.errors import TileccError
from tilecc.fileio import write_npy_outputs
from tilecc.nki.driver import run_traced, trace_kernel
from tilecc.nki.loader import kernel_failure, load_inputs, load_kernel


def run(args: argparse.Namespace) -> int:
    if args.replicas is not None:
        raise TileccError("--replicas applies to HLO modules, not to kernels")
    kernel = load_kernel(args.target)
    arrays = load_inputs(args.input, kernel)
    try:
        traced = trace_kernel(kernel, **arrays)
    except (TileccError, MemoryError):  # MemoryError: the CLI's one line
        raise
    except Exception as err:
        raise kernel_failure(err) from None
    outputs = run_traced(traced, {t.name: arrays[t.name] for t in traced.kernel.inputs})
    write_npy_outputs(args.out, ((t.name, a) for t, a in zip(traced.kernel.outputs, outputs)))
    html, check = getattr(args, "html", None), getattr(args, "check", False)  # older callers
    if html or check:
        from tilecc.viz.kernel_report import report_kernel_run
        return report_kernel_run(kernel, arrays, outputs, html, check)
    return 0
