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
more than doubles the convolution's CPU time: OPENBLAS_NUM_THREADS=1 avoids that).

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
- select-and-scatter: the select fold per window element, then the ordered rounds (an
  arrival-rank sort of every target); windows that do not overlap now scatter in one op.
"""

from __future__ import annotations

import time

import numpy as np

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
    print(f"{'case':50} {'ours wall':>10} {'XLA wall':>10} {'ratio':>7} "
          f"{'ours CPU':>10} {'XLA CPU':>10} {'ratio':>7}")
    for name in CASES:
        (ow, oc), (tw, tc) = ours[name], theirs[name]
        print(f"{name:50} {ow * 1e3:>7.2f} ms {tw * 1e3:>7.2f} ms {ow / tw:>6.2f}x "
              f"{oc * 1e3:>7.2f} ms {tc * 1e3:>7.2f} ms {oc / tc:>6.2f}x")


if __name__ == "__main__":
    main()
