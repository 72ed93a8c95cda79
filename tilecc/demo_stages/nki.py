"""Demo stage: an NKI kernel written in Python, traced to KLR, lowered to BIR, simulated.

Runs examples/kernels/softmax_row.py on seeded inputs: prints a short listing of the BIR
program the codegen produced (one line per instruction: name, engine, outputs <- inputs,
op fields), then checks the simulated result against the kernel's numpy reference and
against the KLR reference interpreter on the same traced kernel.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from tilecc.bir.inst import Program
from tilecc.bir.listing import format_instruction
from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.errors import TileccError
from tilecc.nki.driver import run_traced, trace_kernel

TITLE = "nki: a softmax kernel in Python -> KLR -> BIR -> simulator"
KERNEL = Path("kernels") / "softmax_row.py"


def load_example(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def print_listing(program: Program, out: TextIO) -> None:
    for inst in program.instructions:
        print("    " + format_instruction(inst), file=out)


def run_stage(examples: Path, out: TextIO) -> bool:
    path = examples / KERNEL
    try:
        example = load_example(path)
        inputs = example.make_inputs(np.random.default_rng(0))
        traced = trace_kernel(example.KERNEL, *inputs)
        program = codegen_kernel(traced.kernel)
        verify_program(program)
        arrays = {t.name: a for t, a in zip(traced.kernel.inputs, inputs)}
        simulated = run_traced(traced, arrays)[0]
        interpreted = run_traced(traced, arrays, backend="klr")[0]
    except (OSError, TileccError) as err:
        print(f"  error: {err}", file=out)
        return False
    print(f"  kernel: {examples.name}/{KERNEL} ({len(traced.kernel.body)} KLR statements, "
          f"{len(program.instructions)} BIR instructions)", file=out)
    print_listing(program, out)
    want = example.reference(*inputs)
    ok = _check(out, np.allclose(simulated, want, **example.TOLERANCE),
                f"simulated BIR equals the numpy reference {list(want.shape)}")
    ok &= _check(out, np.array_equal(simulated, interpreted),
                 "simulated BIR equals the KLR reference interpreter bit for bit")
    return ok


def _check(out: TextIO, ok: bool, what: str) -> bool:
    print(f"  [{'ok' if ok else 'FAILED'}] {what}", file=out)
    return ok
