"""Benchmark: a tiled 2048 x 2048 x 2048 bf16 matmul traced, lowered and simulated, against
the bare numpy of the same tile loop in the same run.

Usage: python bench/sim_matmul.py [--size 2048] [--repeat 3]
The kernel is examples/kernels/tiled_matmul.py's loop (128 x 128 x 512 tiles: per output
tile, 16 steps of two DMA loads and one nc_matmul accumulating into a PSUM bank, then a
PSUM -> SBUF copy and a store). Figures (process CPU time, best of --repeat):
- trace + lower: NKI trace -> KLR -> BIR codegen + verifier (target <= 0.5 s);
- simulation: the BIR simulator on the program, against the numpy peer that runs the same
  tile loop (bf16 tiles converted to float32, `acc += st.T @ mv`, one float32 output);
  target: simulation <= 2x the numpy loop;
- per-instruction overhead on small tiles: 2000 accumulating 16 x 16 x 16 float32 matmuls,
  simulator time per instruction minus the numpy peer's per step (target <= 10 us).
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path
from typing import Callable

import ml_dtypes
import numpy as np

from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.klr import ast as k
from tilecc.nki.driver import trace_kernel
from tilecc.sim.execute import simulate

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "kernels" / "tiled_matmul.py"


def load_kernel() -> object:
    spec = importlib.util.spec_from_file_location("tiled_matmul", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.KERNEL


def best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        times.append(time.process_time() - start)
    return min(times), result


def numpy_tile_loop(lhsT: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    k_size, m_size = lhsT.shape
    n_size = rhs.shape[1]
    out = np.empty((m_size, n_size), np.float32)
    for m in range(0, m_size, 128):
        for n in range(0, n_size, 512):
            acc = np.zeros((128, 512), np.float32)
            for kk in range(0, k_size, 128):
                st = lhsT[kk:kk + 128, m:m + 128].astype(np.float32)
                mv = rhs[kk:kk + 128, n:n + 512].astype(np.float32)
                acc += st.T @ mv
            out[m:m + 128, n:n + 512] = acc
    return out


def small_matmul_kernel(count: int) -> k.Kernel:
    a = k.make_tensor("a", k.Dtype.float32, (16, 16), k.Memory.hbm)
    out = k.make_tensor("out", k.Dtype.float32, (16, 16), k.Memory.hbm)
    x = k.make_tensor("x", k.Dtype.float32, (16, 16), k.Memory.sbuf)
    acc = k.make_tensor("acc", k.Dtype.float32, (16, 16), k.Memory.psum)
    res = k.make_tensor("res", k.Dtype.float32, (16, 16), k.Memory.sbuf)
    body: list[k.Operator] = [k.NcDmaCopy(x, a)]
    body += [k.NcMatMul(acc, x, x, accumulate=i > 0) for i in range(count)]
    body += [k.NcCopy(res, acc, engine=k.Engine.dve), k.NcDmaCopy(out, res)]
    return k.Kernel("small", [a], [out], body)


def small_numpy(a: np.ndarray, count: int) -> np.ndarray:
    acc = np.zeros((16, 16), np.float32)
    for _ in range(count):
        acc += a.T @ a
    return acc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    size = args.size
    rng = np.random.default_rng(0)
    lhsT = rng.standard_normal((size, size)).astype(ml_dtypes.bfloat16)
    rhs = rng.standard_normal((size, size)).astype(ml_dtypes.bfloat16)
    kernel = load_kernel()

    def trace_and_lower() -> object:
        traced = trace_kernel(kernel, lhsT, rhs)
        program = codegen_kernel(traced.kernel)
        verify_program(program)
        return traced, program

    lower_time, (traced, program) = best(trace_and_lower, args.repeat)  # type: ignore[misc]
    names = [t.name for t in traced.kernel.inputs]
    sim_time, sim_out = best(lambda: simulate(program, dict(zip(names, (lhsT, rhs)))), args.repeat)
    peer_time, peer_out = best(lambda: numpy_tile_loop(lhsT, rhs), args.repeat)
    result = next(iter(sim_out.values()))  # type: ignore[union-attr]
    np.testing.assert_allclose(result, peer_out, rtol=1e-4, atol=1e-3)
    print(f"tiled matmul {size}^3 bf16: {len(traced.kernel.body)} KLR statements, "
          f"{len(program.instructions)} BIR instructions")
    print(f"  trace + lower:     {lower_time:.3f} s (target <= 0.5 s)")
    print(f"  simulation:        {sim_time:.3f} s; numpy tile loop {peer_time:.3f} s; "
          f"ratio {sim_time / peer_time:.2f}x (target <= 2x)")

    count = 2000
    small = codegen_kernel(small_matmul_kernel(count))
    a = rng.standard_normal((16, 16)).astype(np.float32)
    small_time, small_out = best(lambda: simulate(small, {"a": a}), args.repeat * 2)
    small_peer, want = best(lambda: small_numpy(a, count), args.repeat * 2)
    np.testing.assert_allclose(small_out["out"], want, rtol=1e-4)  # type: ignore[index]
    per_inst = small_time / (count + 3) * 1e6
    per_peer = small_peer / count * 1e6
    print(f"  small tiles:       {per_inst:.1f} us per instruction, numpy {per_peer:.1f} us per "
          f"step; overhead {per_inst - per_peer:.1f} us (target <= 10 us)")


if __name__ == "__main__":
    main()
