"""Demo stage: an NKI kernel written in Python, traced to KLR, lowered to BIR, simulated.

Runs examples/kernels/softmax_row.py on seeded inputs: prints a short listing of the BIR
program the codegen produced (one line per instruction: name, engine, outputs <- inputs,
op fields), then checks the simulated result against the kernel's numpy reference and
against the KLR reference interpreter on the same traced kernel.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from tilecc.bir.inst import Program
from tilecc.bir.listing import format_instruction
from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.errors import TileccError
from tilecc.nki.driver import TracedKernel, run_traced, trace_kernel

TITLE = "nki: a softmax kernel in Python -> KLR -> BIR -> simulator"
KERNEL = Path("kernels") / "softmax_row.py"


def load_example(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class ExampleRun:
    """A bundled kernel file run end to end on its make_inputs(rng seeded 0)."""
    example: Any
    inputs: tuple[Any, ...]
    traced: TracedKernel
    program: Program
    simulated: np.ndarray   # the first output, on the BIR simulator
    interpreted: np.ndarray   # the first output, on the KLR reference interpreter


def run_example(path: Path) -> ExampleRun:
    """Trace the file's KERNEL, lower and verify its BIR, and run it on both executors
    (OSError / TileccError propagate, for the stage to report)."""
    example = load_example(path)
    inputs = tuple(example.make_inputs(np.random.default_rng(0)))
    traced = trace_kernel(example.KERNEL, *inputs)
    program = codegen_kernel(traced.kernel)
    verify_program(program)
    arrays = {t.name: a for t, a in zip(traced.kernel.inputs, inputs)}
    return ExampleRun(example, inputs, traced, program, run_traced(traced, arrays)[0],
                      run_traced(traced, arrays, backend="klr")[0])


def print_listing(program: Program, out: TextIO) -> None:
    for inst in program.instructions:
        print("    " + format_instruction(inst), file=out)


def run_stage(examples: Path, out: TextIO) -> bool:
    path = examples / KERNEL
    try:
        run = run_example(path)
    except (OSError, TileccError) as err:
        print(f"  error: {err}", file=out)
        return False
    example, inputs, traced, program = run.example, run.inputs, run.traced, run.program
    simulated, interpreted = run.simulated, run.interpreted
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
