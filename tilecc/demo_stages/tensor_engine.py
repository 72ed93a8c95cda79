"""Demo stage: the Tensor Engine and DMA example kernels, traced, lowered and simulated.

Runs examples/kernels/tiled_matmul.py (bf16 in, float32 out, PSUM accumulation over K),
block_transpose.py (128 x 128 blocks through the Tensor Engine) and embedding_gather.py
(rows gathered by an index tile with an indirect DMA) on seeded inputs: for each, the
instruction mix of the BIR program, then the simulated result against the kernel's numpy
reference and against the KLR reference interpreter on the same traced kernel.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TextIO

import numpy as np

from tilecc.demo_stages.nki import run_example
from tilecc.errors import TileccError

TITLE = "tensor engine: matmul, transpose and gather kernels -> KLR -> BIR -> simulator"
KERNELS = [Path("kernels") / f"{name}.py" for name in
           ("tiled_matmul", "block_transpose", "embedding_gather")]


def run_stage(examples: Path, out: TextIO) -> bool:
    ok = True
    for kernel in KERNELS:
        ok &= _run_one(examples, kernel, out)
    return ok


def _run_one(examples: Path, kernel: Path, out: TextIO) -> bool:
    try:
        run = run_example(examples / kernel)
    except (OSError, TileccError) as err:
        print(f"  error: {kernel}: {err}", file=out)
        return False
    example, inputs, program = run.example, run.inputs, run.program
    simulated, interpreted = run.simulated, run.interpreted
    mix = Counter(type(inst).__name__[4:] for inst in program.instructions)
    print(f"  kernel: {examples.name}/{kernel} ({len(program.instructions)} BIR instructions: "
          + ", ".join(f"{n} {name}" for name, n in mix.most_common()) + ")", file=out)
    want = example.reference(*inputs)
    ok = _check(out, simulated.dtype == want.dtype and np.allclose(
        simulated.astype(np.float64), want.astype(np.float64), **example.TOLERANCE, equal_nan=True),
        f"simulated BIR equals the numpy reference {list(want.shape)} {want.dtype}")
    close = np.allclose(simulated.astype(np.float64), interpreted.astype(np.float64),
                        rtol=1e-5, atol=1e-4, equal_nan=True)
    return ok & _check(out, close, "simulated BIR equals the KLR reference interpreter")


def _check(out: TextIO, ok: bool, what: str) -> bool:
    print(f"    [{'ok' if ok else 'FAILED'}] {what}", file=out)
    return ok
