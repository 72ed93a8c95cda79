"""Sub-byte integers (s4 / u4 / s2 / u2): golden values of the n-bit wrap-around rules, and
reductions, collectives, data movement and converts on them against XLA CPU (the
elementwise ops over every pair of values: test_interpreter_corners)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import XlaJob, run_many_on_xla

S4, U4 = ml_dtypes.int4, ml_dtypes.uint4


def run(text: str, *inputs: np.ndarray, replicas: int = 1) -> list[np.ndarray]:
    return evaluate_module(parse_module(text), [x[None] if replicas == 1 else x
                                                for x in inputs], replicas)


def binary(t: str, op: str, a: list[int], b: list[int]) -> list[int]:
    dtype = S4 if t == "s4" else U4
    n = len(a)
    text = (f"HloModule m\nENTRY e {{\n  a = {t}[{n}] parameter(0)\n"
            f"  b = {t}[{n}] parameter(1)\n  ROOT o = {t}[{n}] {op}(a, b)\n}}\n")
    out = run(text, np.array(a).astype(dtype), np.array(b).astype(dtype))[0]
    assert out.dtype == np.dtype(dtype)
    return [int(v) for v in out[0]]


@pytest.mark.parametrize("op, a, b, want", [
    ("add", [7, -8, -8, 3], [1, -1, -8, 4], [-8, 7, 0, 7]),
    ("multiply", [4, -8, 3, -1], [4, -1, 3, -8], [0, -8, -7, -8]),
    ("divide", [-8, 7, -7, 5], [-1, 0, 2, -2], [-8, -1, -3, -2]),
    ("remainder", [-8, 7, -7, 5], [-1, 0, 2, -2], [0, 7, -1, 1]),
    ("shift-left", [3, 1, 1, -1], [1, 3, 4, -1], [6, -8, 0, 0]),
    ("shift-right-logical", [-8, -1, 7, -8], [1, 3, 4, -1], [4, 1, 0, 0]),
    ("shift-right-arithmetic", [-8, -1, 7, -8], [1, 3, 4, -1], [-4, -1, 0, -1]),
])
def test_s4_wraps_like_four_bit_twos_complement(op: str, a: list[int], b: list[int],
                                                want: list[int]) -> None:
    assert binary("s4", op, a, b) == want


@pytest.mark.parametrize("op, a, b, want", [
    ("add", [15, 8, 0], [1, 8, 15], [0, 0, 15]),
    ("subtract", [0, 3, 15], [1, 5, 15], [15, 14, 0]),
    ("divide", [7, 15, 0], [0, 4, 0], [15, 3, 15]),
    ("shift-right-arithmetic", [8, 15, 7], [1, 2, 1], [12, 15, 3]),
    ("power", [3, 15, 2], [8, 3, 4], [1, 15, 0]),
])
def test_u4_wraps_modulo_sixteen(op: str, a: list[int], b: list[int], want: list[int]) -> None:
    assert binary("u4", op, a, b) == want


def test_unary_rules_at_the_corners() -> None:
    text = """HloModule m
ENTRY e {
  a = s4[4] parameter(0)
  n = s4[4] negate(a)
  b = s4[4] abs(a)
  c = s4[4] count-leading-zeros(a)
  p = s4[4] popcnt(a)
  ROOT t = (s4[4], s4[4], s4[4], s4[4]) tuple(n, b, c, p)
}
"""
    got = run(text, np.array([-8, 7, 0, 1]).astype(S4))
    # popcnt counts s4's sign-extended 8 bits on XLA CPU: -8 is 0xf8 (5 bits)
    assert [[int(v) for v in x[0]] for x in got] == [
        [-8, -7, 0, -1], [-8, 7, 0, 1], [0, 1, 4, 3], [5, 3, 0, 1]]


def test_converts_saturate_from_floats_and_keep_low_bits_from_integers() -> None:
    text = """HloModule m
ENTRY e {
  f = f32[6] parameter(0)
  i = s32[6] parameter(1)
  a = s4[6] convert(f)
  b = s4[6] convert(i)
  c = u4[6] convert(i)
  w = s32[6] convert(b)
  ROOT t = (s4[6], s4[6], u4[6], s32[6]) tuple(a, b, c, w)
}
"""
    f = np.array([7.9, -8.9, 100.0, -np.inf, np.nan, -0.5], np.float32)
    i = np.array([23, 24, -9, 15, -1, 8], np.int32)
    got = [[int(v) for v in x[0]] for x in run(text, f, i)]
    assert got == [[7, -8, 7, -8, 0, 0], [7, -8, 7, -1, -1, -8],
                   [7, 8, 7, 15, 15, 8], [7, -8, 7, -1, -1, -8]]


def test_reduce_adds_with_wrap_around() -> None:
    text = """HloModule m
add {
  a = s4[] parameter(0)
  b = s4[] parameter(1)
  ROOT c = s4[] add(a, b)
}
ENTRY e {
  x = s4[2,5] parameter(0)
  z = s4[] constant(0)
  ROOT r = s4[2] reduce(x, z), dimensions={1}, to_apply=add
}
"""
    x = np.array([[7, 7, 7, 7, 7], [-8, -8, 1, 0, 0]]).astype(S4)
    assert [int(v) for v in run(text, x)[0][0]] == [3, 1]  # 35 = 0x23, -15 = 0x..f1


def reducer(name: str, t: str, op: str) -> str:
    return (f"{name} {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n"
            f"  ROOT c = {t}[] {op}(a, b)\n}}\n")


def oracle_cases() -> dict[str, tuple[str, int]]:
    cases: dict[str, tuple[str, int]] = {}
    for t in ("s4", "u4", "s2", "u2"):
        ops = ["add", "multiply", "maximum", "minimum", "and", "or", "xor"]
        reducers = "".join(reducer(f"r_{op}", t, op) for op in ops)
        reduces = "\n".join(
            f"  o{k} = {t}[3] reduce(x, i), dimensions={{1}}, to_apply=r_{op}"
            for k, op in enumerate(ops))
        names = ", ".join(f"o{k}" for k in range(len(ops)))
        shapes = ", ".join(f"{t}[3]" for _ in ops)
        # 70 > 32 elements per row: XLA CPU's tree rewrite applies the init 4 times
        cases[f"{t} reduce"] = (f"HloModule m\n{reducers}ENTRY e {{\n  x = {t}[3,70] "
                                f"parameter(0)\n  i = {t}[] parameter(1)\n{reduces}\n"
                                f"  ROOT t = ({shapes}) tuple({names})\n}}\n", 1)
        if t in ("s2", "u2"):
            continue  # XLA CPU refuses 2-bit all-reduce / reduce-scatter (UNIMPLEMENTED)
        # XLA CPU all-reduces with add / multiply / maximum / minimum only
        arith = ops[:4]
        collectives = "\n".join(
            f"  o{k} = {t}[6] all-reduce(x), replica_groups={{}}, to_apply=r_{op}"
            for k, op in enumerate(arith))
        shapes6 = ", ".join(f"{t}[6]" for _ in arith)
        names4 = ", ".join(f"o{k}" for k in range(len(arith)))
        cases[f"{t} all-reduce"] = (
            f"HloModule m, replica_count=4\n{reducers}ENTRY e {{\n  x = {t}[6] "
            f"parameter(0)\n{collectives}\n  ROOT t = ({shapes6}) tuple({names4})\n}}\n", 4)
        other = {"s4": "u4", "u4": "s4"}[t]
        cases[f"{t} movement"] = (f"""HloModule m, replica_count=2
{reducer("r_max", t, "maximum")}{reducer("r_add", t, "add")}
ENTRY e {{
  x = {t}[4,6] parameter(0)
  v = {t}[] parameter(1)
  s = s32[] parameter(2)
  g = {t}[8,6] all-gather(x), dimensions={{0}}, replica_groups={{}}
  rs = {t}[2,6] reduce-scatter(x), dimensions={{0}}, replica_groups={{}}, to_apply=r_add
  cp = {t}[4,6] collective-permute(x), source_target_pairs={{{{0,1}},{{1,0}}}}
  at = {t}[4,6] all-to-all(x), dimensions={{0}}, replica_groups={{{{0,1}}}}
  p = {t}[6,9] pad(x, v), padding=1_1x1_2
  rw = {t}[3,5] reduce-window(x, v), window={{size=2x2}}, to_apply=r_max
  c = {t}[8,6] concatenate(x, x), dimensions={{0}}
  ds = {t}[2,3] dynamic-slice(x, s, s), dynamic_slice_sizes={{2,3}}
  io = {t}[20] iota(), iota_dimension=0
  k = {t}[4] constant({{1, 0, 1, 0}})
  cl = {t}[4,6] clamp(v, x, x)
  tr = {t}[6,4] transpose(x), dimensions={{1,0}}
  ix = s32[3,1] constant({{{{0}}, {{2}}, {{0}}}})
  up = {t}[3,6] slice(x), slice={{[1:4], [0:6]}}
  sc = {t}[4,6] scatter(x, ix, up), update_window_dims={{1}}, inserted_window_dims={{0}},
      scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=r_max
  bc = {other}[4,6] bitcast-convert(x)
  ROOT t = ({t}[8,6], {t}[2,6], {t}[4,6], {t}[4,6], {t}[6,9], {t}[3,5], {t}[8,6],
            {t}[2,3], {t}[20], {t}[4], {t}[4,6], {t}[6,4], {t}[4,6], {other}[4,6])
      tuple(g, rs, cp, at, p, rw, c, ds, io, k, cl, tr, sc, bc)
}}
""", 2)
    cases["s4 custom reducer"] = ("""HloModule m
first_max {
  a = s4[] parameter(0)
  b = s4[] parameter(1)
  s = s4[] add(a, b)
  ROOT c = s4[] maximum(s, a)
}
ENTRY e {
  x = s4[4,40] parameter(0)
  i = s4[] constant(-8)
  ROOT r = s4[4] reduce(x, i), dimensions={1}, to_apply=first_max
}
""", 1)
    cases["s4 dot and sort"] = ("""HloModule m
lt {
  a = s4[] parameter(0)
  b = s4[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = s4[3,5] parameter(0)
  y = s4[5,2] parameter(1)
  d = s4[3,2] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = s4[3,5] sort(x), dimensions={1}, to_apply=lt
  ROOT t = (s4[3,2], s4[3,5]) tuple(d, s)
}
""", 1)
    return cases


ORACLE = oracle_cases()
NAMES = sorted(ORACLE)


@pytest.fixture(scope="module")
def xla_results() -> dict[str, object]:
    jobs = [XlaJob("run", text, random_inputs(parse_module(text), replicas, 3), replicas)
            for text, replicas in (ORACLE[name] for name in NAMES)]
    return dict(zip(NAMES, run_many_on_xla(jobs)))


@pytest.mark.oracle
@pytest.mark.parametrize("name", NAMES)
def test_interpreter_matches_xla(name: str, xla_results: dict[str, object]) -> None:
    text, replicas = ORACLE[name]
    want = xla_results[name]
    if isinstance(want, Exception):
        raise want
    module = parse_module(text, name)
    got = evaluate_module(module, random_inputs(module, replicas, 3), replicas)
    assert isinstance(want, list) and len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, f"out{k}"
        np.testing.assert_array_equal(g.astype(np.int64), w.astype(np.int64),
                                      err_msg=f"{name} out{k}")
