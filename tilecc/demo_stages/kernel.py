"""Demo stage: bundled KLR kernels read, lowered to BIR, verified, simulated and checked.

For every examples/klr/*.klr.json (three kernels written for tilecc -- a softmax row, an
RMSNorm with a bf16 output, a decay scan with a partition reduce -- and the five kernels
the klr 0.0.12 tool wrote), with seeded inputs: codegen + birverifier + simulator, then
the independent KLR interpreter on the same inputs. Integers must agree bit for bit,
floats within 1e-5 relative (bf16: one unit in the last place); the kernels written for
tilecc are also checked against numpy.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import numpy as np

from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.errors import TileccError
from tilecc.klr.ast import Kernel
from tilecc.klr.interp import interpret_kernel, np_dtype
from tilecc.klr.read import read_kernel_file
from tilecc.sim.execute import simulate

TITLE = "kernel: KLR -> BIR codegen, simulator vs the KLR interpreter"
FOLDER = Path("klr")
# per kernel, value ranges of inputs that need one (a decaying recurrence, positive data)
INPUT_RANGES: dict[str, dict[str, tuple[float, float]]] = {"decay_scan": {"a": (0.5, 1.0)}}


def _softmax(ins: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    x = ins["x"].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"out": e / e.sum(axis=1, keepdims=True)}


def _rmsnorm(ins: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    x = ins["x"].astype(np.float64)
    rstd = 1 / np.sqrt((x * x).mean(axis=1, keepdims=True) + 2.0 ** -20)
    return {"out": x * rstd * ins["gamma"]}


def _decay_scan(ins: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    a, b = ins["a"].astype(np.float64), ins["b"].astype(np.float64)
    h = np.empty_like(a)
    prev = np.zeros(a.shape[0])
    for i in range(a.shape[1]):
        prev = a[:, i] * prev + b[:, i]
        h[:, i] = prev
    return {"h": h, "totals": h.sum(axis=0, keepdims=True)}


NUMPY_REFERENCES: dict[str, Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]] = {
    "softmax_row": _softmax, "rmsnorm": _rmsnorm, "decay_scan": _decay_scan}


def make_inputs(kernel_name: str, kernel: Kernel, rng: np.random.Generator) -> dict[str, np.ndarray]:
    ranges = INPUT_RANGES.get(kernel_name, {})
    inputs: dict[str, np.ndarray] = {}
    for t in kernel.inputs:
        shape = (t.shape.par_dim,) + tuple(t.shape.free_dims)
        dtype = np_dtype(t.dtype)
        if dtype.kind in "iu":
            inputs[t.name] = rng.integers(-1000, 1000, size=shape).astype(dtype)
        else:
            low, high = ranges.get(t.name, (-4.0, 4.0))
            inputs[t.name] = rng.uniform(low, high, size=shape).astype(dtype)
    return inputs


def largest_difference(sim: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> tuple[bool, float]:
    """(agree, largest relative difference) under the stage's comparison contract."""
    worst, agree = 0.0, sim.keys() == ref.keys()
    for name in ref:
        s, r = sim.get(name), ref[name]
        if s is None or s.dtype != r.dtype or s.shape != r.shape:
            return False, float("inf")
        if r.dtype.kind in "iu":
            agree &= bool(np.array_equal(s, r))
            continue
        s64, r64 = s.astype(np.float64), r.astype(np.float64)
        diff = np.abs(s64 - r64) / np.maximum(np.abs(r64), 1e-30)
        tol = 1e-5 if r.dtype == np.float32 else 2.0 ** -7
        agree &= bool(np.all((diff <= tol) | (s64 == r64)))
        worst = max(worst, float(np.max(diff, initial=0.0)))
    return agree, worst


def check_kernel(path: Path, out: TextIO) -> bool:
    name = path.name.split(".")[0]
    kernel = read_kernel_file(str(path))
    program = codegen_kernel(kernel)
    verify_program(program)
    inputs = make_inputs(kernel.name if kernel.name in INPUT_RANGES else name, kernel,
                         np.random.default_rng(2026))
    start = time.perf_counter()
    sim = simulate(program, inputs)
    sim_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    ref = interpret_kernel(kernel, inputs)
    ref_ms = (time.perf_counter() - start) * 1e3
    ok, worst = largest_difference(sim, ref)
    note = ""
    if (numpy_ref := NUMPY_REFERENCES.get(kernel.name)) is not None:
        want = numpy_ref(inputs)
        matches = all(np.allclose(sim[n].astype(np.float64), want[n], rtol=1e-2 if sim[n].dtype != np.float32 else 1e-4,
                                  atol=1e-5) for n in want)
        ok &= matches
        note = ", == numpy" if matches else ", differs from numpy"
    print(f"  [{'ok' if ok else 'FAILED'}] {name}: {len(kernel.body)} KLR operators -> "
          f"{len(program.instructions)} BIR instructions; simulated in {sim_ms:.1f} ms, "
          f"interpreted in {ref_ms:.1f} ms; largest relative difference {worst:.1e}{note}",
          file=out)
    return ok


def run_stage(examples: Path, out: TextIO) -> bool:
    paths = sorted((examples / FOLDER).glob("*.klr.json"))
    if not paths:
        print(f"  [FAILED] no KLR kernels in {examples / FOLDER}", file=out)
        return False
    ok = True
    for path in paths:
        try:
            ok &= check_kernel(path, out)
        except TileccError as err:
            print(f"  [FAILED] {path.name}: {err}", file=out)
            ok = False
    return ok
