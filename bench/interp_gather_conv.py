"""Interpreter speed on gather, scatter, convolution and select-and-scatter against XLA CPU
executing the same module (compile time excluded), 2 replicas.

Cases: an embedding lookup (gather of 8192 rows of f32[4096,256]), its gradient (scatter-add
of those rows, duplicates included) in f32 (ordered rounds) and s32 (ufunc.at), a 3x3
convolution f32[8,32,32,16] x f32[3,3,16,32] (b01f), and a 2x2 max-pool gradient
(select-and-scatter) on f32[8,32,32,32].
Method: every case is compiled once on both sides, then ROUNDS rounds interleave REPEATS
runs of ours with REPEATS runs of XLA's, so load from other processes hits both alike; a
figure is the best wall time over all runs. ratio = interpreter / XLA.
Run: .venv/bin/python bench/interp_gather_conv.py

Where the time went (cProfile, then the change):
- gather: numpy advanced indexing with one broadcast index array per operand dim built an
  index for every element (two int64 arrays of 4M entries for 8192 rows of 256). Window
  dims the slice spans whole are now basic slices: numpy copies rows.
- scatter: the ordered rounds moved single elements (4M targets, ~10 rounds of gathers and
  scatters of element arrays); they now move whole rows of the trailing dims every window
  spans. f32 stays on the rounds: XLA CPU flushes subnormal operands and results at every
  update, which ufunc.at cannot do; what remains is mostly that flush (abs < tiny over the
  operands and the result, every round).
- conv: one im2col copy (rows of input feature x kernel element) and a batched matmul;
  the copy and its transposes dominate. Not changed yet.
- select-and-scatter: the select fold per window element, then the ordered rounds.
"""

from __future__ import annotations

import time

import numpy as np

from tilecc.hlo.interpreter import compile_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import XlaJob, XlaSession

ROUNDS = 3
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
         "scatter-add f32 rows (ordered rounds)": scatter("f32"),
         "scatter-add s32 rows (ufunc.at)": scatter("s32"),
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
    ours = {name: float("inf") for name in CASES}
    theirs = dict(ours)
    with XlaSession(devices=REPLICAS) as session:
        for _ in range(ROUNDS):
            for name, text, inputs, compiled in prepared:
                for _ in range(REPEATS):
                    start = time.perf_counter()
                    compiled(inputs)
                    ours[name] = min(ours[name], time.perf_counter() - start)
                result = session.submit(XlaJob("time", text, inputs, REPLICAS, 1, REPEATS))
                if isinstance(result, Exception):
                    raise result
                theirs[name] = min(theirs[name], float(result[0][0]))
    print(f"best of {ROUNDS} x {REPEATS} interleaved runs, {REPLICAS} replicas; "
          "ratio = interpreter / XLA CPU")
    print(f"{'case':50} {'ours':>10} {'XLA':>10} {'ratio':>7}")
    for name in CASES:
        print(f"{name:50} {ours[name] * 1e3:>7.2f} ms {theirs[name] * 1e3:>7.2f} ms "
              f"{ours[name] / theirs[name]:>6.2f}x")


if __name__ == "__main__":
    main()
