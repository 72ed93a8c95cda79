"""Interpreter speed on gather, scatter, convolution and select-and-scatter against XLA CPU
executing the same module (compile time excluded), 2 replicas.

Cases: an embedding lookup (gather of 8192 rows of f32[4096,256]), its gradient (scatter-add
of those rows, duplicates included) in f32 and s32, a 3x3
convolution f32[8,32,32,16] x f32[3,3,16,32] (b01f), and a 2x2 max-pool gradient
(select-and-scatter) on f32[8,32,32,32].
Method: every case is compiled once on both sides, then ROUNDS rounds interleave REPEATS
runs of ours with REPEATS runs of XLA's, so load from other processes hits both alike; a
figure is the best over all runs, of wall time and of process CPU time (XLA's counts all
its threads). ratio = interpreter / XLA, target <= 3x for gather, conv and scatter-add.
Run: .venv/bin/python bench/interp_gather_conv.py (on a loaded machine multithreaded BLAS
more than doubles the convolution's CPU time: OPENBLAS_NUM_THREADS=1 avoids that). The
second line printed names numpy's BLAS kernels: on this AVX-512 CPU (AMD family 26)
numpy's OpenBLAS selects its Haswell (AVX2) kernels unless told otherwise,
OPENBLAS_CORETYPE=SkylakeX (see the conv notes below).

Where the time went (cProfile and per-step timing, then the change):
- gather: numpy advanced indexing with one broadcast index array per operand dim built an
  index for every element (two int64 arrays of 4M entries for 8192 rows of 256). Window
  dims the slice spans whole are now basic slices: numpy copies rows.
- scatter-add: the ordered rounds gathered and scattered the target rows in every round
  and flushed subnormals (abs < tiny over both operands and the result) in every round:
  the flush was 45% of the time, the per-round gathers 35%. interp/row_fold.py keeps the
  order (round k adds the k-th update of every row) but sorts once, gathers the touched
  rows once into an accumulator whose rows with more than k updates are a prefix, and
  adds blocks of 256 KiB of updates in place; f32 / f64 add / max / min skip the flush
  when no value in play is below 2^mantissa smallest normals (then none can become
  subnormal; checked per block in cache), and restart with the flushing op otherwise.
  What remains: one gather of every update row, the add, the check (f32: a third), the
  copy of the operand into the result.
- conv: the im2col copy moved single elements (input feature outer, kernel element inner);
  the windows are now copied feature-innermost (runs of kernel-row x features), the rest
  is the matmul and the result's flush.
- conv, again (per-call timing of its numpy calls): the matmul of the 9.4 MB im2col rows is
  70% (~3 ms on one OpenBLAS thread, ~50 GFLOP/s), the im2col copy 10-15%, np.pad 6%
  (now one zeros buffer and an assignment), the flush of the result 10% (convert to the
  same float type no longer copies the result as well). XLA CPU runs the same 151 MFLOP
  in about 1 ms of CPU on an idle machine, so one-thread BLAS alone is ~3x: not met.
- scatter-add, again: per replica the gather of every update row (~0.8 ms), the bound
  check (~0.4 ms), the adds and the gather / scatter of the touched rows; the rounds' block
  loop adds ~70 Python-level calls. Not changed in this round.
- scatter-add, third round (per-section process time, best of 40, load 8-18 on 2 CPUs):
  the operand copy 0.2-0.5 ms, sort and layout 0.45, the accumulator's gather and scatter
  0.8 ms each (7,100 touched rows of 1 KiB through RAM), the rounds 2.3-3 ms, of which the
  gather of the 16,384 update rows 1.8 ms (np.take costs ~33 ns per 1 KiB row above a plain
  copy of the same bytes; fancy indexing ~60% more), and for f32 the check ~1.1 ms (np.abs
  allocated a 256 KiB temporary per block). Measured and dropped: np.add.at 35 ms (f32) /
  23 ms (s32), per-index overhead; np.add.reduceat over rows 85 ms and not left to right
  bit for bit; reading the updates in their own order (consecutive blocks, repeated
  targets in sub-rounds) moves the random access onto the result's rows, whose gather and
  scatter cost what the update gather saved. Now each block of touched rows is gathered
  into a buffer that stays in cache, takes all its rounds there and is written back once
  (the accumulator never goes through RAM); gathers are np.take into reused buffers
  (mode="clip": with out= and "raise" numpy copies first); the check is two integer minima
  of the block's bits, no temporary; a block that sees a small value is redone alone with
  the flushing op. f32 6.6 -> 5.2 ms, s32 5.2 -> 4.4 ms of CPU (interleaved, load ~10).
  What remains: the update gather, the check (~0.6 ms of f32), the rows' gather / scatter.
- conv, third round: numpy's OpenBLAS runs its Haswell (AVX2) kernels on this AVX-512 CPU;
  the matmul is 1.98 of 2.45 ms at ~76 GFLOP/s, the AVX2 kernel's peak, where XLA's Eigen
  runs AVX-512. With OPENBLAS_CORETYPE=SkylakeX the same code takes 1.84-1.88 ms against
  XLA's 0.91-0.94 (2.0x; 3.7-4.1 ms with the Haswell kernels in the same hour, load 13).
  Measured and dropped (Haswell / SkylakeX kernels): 9 shifted matmuls of K=16 2.5 / 1.3
  ms, one K=16 matmul to 9x32 columns then shifted adds 5.2 / 4.1 ms, the transposed
  product 1.76 / 1.70 ms (the im2col product 1.98 / 1.22). The result of a b01f conv is now
  the matmul's own array (it was copied by a reshape of a transposed view, then flushed as
  a strided view).
- the bench after the third round, median of each ratio over 9 runs at load 16-20 (single
  runs swing by 1.5x there; XLA's CPU figure now and then dips far below its wall time):
  CPU ratio f32 scatter-add 2.96x (3.96x for the code before, 3 runs in the same hour),
  s32 2.92x, conv 3.57x (Haswell kernels) / 1.94x (SkylakeX kernels, 6 runs), gather 1.34x.
- select-and-scatter: the select fold per window element, then the ordered rounds (an
  arrival-rank sort of every target); windows that do not overlap now scatter in one op.
"""

from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_info

from tilecc.hlo.interpreter import compile_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import XlaJob, XlaSession

ROUNDS = 5
REPEATS = 3
REPLICAS = 2


def reducer(t: str) -> str:
    return (f"sum {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n"
            f"  ROOT c = {t}[] add(a, b)\n}}\n")


GATHER = """HloModule gather
ENTRY e {
  table = f32[4096,256] parameter(0)
  idx = s32[8192] parameter(1)
  ROOT g = f32[8192,256] gather(table, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,256}
}
"""


def scatter(t: str) -> str:
    return f"""HloModule scatter_{t}
{reducer(t)}
ENTRY e {{
  table = {t}[4096,256] parameter(0)
  idx = s32[8192] parameter(1)
  rows = {t}[8192,256] parameter(2)
  ROOT s = {t}[4096,256] scatter(table, idx, rows), update_window_dims={{1}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=sum
}}
"""


CONV = """HloModule conv
ENTRY e {
  x = f32[8,32,32,16] parameter(0)
  w = f32[3,3,16,32] parameter(1)
  ROOT c = f32[8,32,32,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
"""

POOL_GRAD = """HloModule pool_grad
sel {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
""" + reducer("f32") + """
ENTRY e {
  x = f32[8,32,32,32] parameter(0)
  g = f32[8,16,16,32] parameter(1)
  z = f32[] parameter(2)
  ROOT s = f32[8,32,32,32] select-and-scatter(x, g, z), window={size=1x2x2x1 stride=1x2x2x1}, select=sel, scatter=sum
}
"""

CASES = {"gather 8192 rows of f32[4096,256]": GATHER,
         "scatter-add f32 rows (XLA's update order)": scatter("f32"),
         "scatter-add s32 rows": scatter("s32"),
         "conv 3x3 f32[8,32,32,16] -> 32 features": CONV,
         "select-and-scatter 2x2 pool grad f32[8,32,32,32]": POOL_GRAD}


def inputs_for(text: str) -> list[np.ndarray]:
    module = parse_module(text)
    rng = np.random.default_rng(0)
    inputs = random_inputs(module, REPLICAS, 0)
    for k, param in enumerate(module.entry.parameters):  # type: ignore[union-attr]
        if param.name == "idx":
            inputs[k] = rng.integers(0, 4096, size=inputs[k].shape).astype(np.int32)
        elif inputs[k].dtype.kind == "f":
            inputs[k] = rng.standard_normal(inputs[k].shape).astype(inputs[k].dtype)
    return inputs


def main() -> None:
    prepared = []
    for name, text in CASES.items():
        inputs = inputs_for(text)
        compiled = compile_module(parse_module(text), REPLICAS)
        compiled(inputs)
        prepared.append((name, text, inputs, compiled))
    # best [wall, cpu] seconds per case
    ours = {name: [float("inf")] * 2 for name in CASES}
    theirs = {name: [float("inf")] * 2 for name in CASES}
    with XlaSession(devices=REPLICAS) as session:
        for _ in range(ROUNDS):
            for name, text, inputs, compiled in prepared:
                for _ in range(REPEATS):
                    start, start_cpu = time.perf_counter(), time.process_time()
                    compiled(inputs)
                    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
                    ours[name] = [min(ours[name][0], wall), min(ours[name][1], cpu)]
                result = session.submit(XlaJob("time", text, inputs, REPLICAS, 1, REPEATS))
                if isinstance(result, Exception):
                    raise result
                wall, cpu = (float(v) for v in result[0])
                theirs[name] = [min(theirs[name][0], wall), min(theirs[name][1], cpu)]
    print(f"best of {ROUNDS} x {REPEATS} interleaved runs, {REPLICAS} replicas; "
          "ratio = interpreter / XLA CPU")
    for lib in threadpool_info():  # the convolution's matmul runs on these kernels
        if lib["user_api"] == "blas":
            print(f"numpy's BLAS: {lib['internal_api']} {lib['version']}, "
                  f"{lib.get('architecture')} kernels, {lib['num_threads']} thread(s)")
    print(f"{'case':50} {'ours wall':>10} {'XLA wall':>10} {'ratio':>7} "
          f"{'ours CPU':>10} {'XLA CPU':>10} {'ratio':>7}")
    for name in CASES:
        (ow, oc), (tw, tc) = ours[name], theirs[name]
        print(f"{name:50} {ow * 1e3:>7.2f} ms {tw * 1e3:>7.2f} ms {ow / tw:>6.2f}x "
              f"{oc * 1e3:>7.2f} ms {tc * 1e3:>7.2f} ms {oc / tc:>6.2f}x")


if __name__ == "__main__":
    main()
