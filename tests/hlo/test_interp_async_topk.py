"""Interpreter coverage of XLA's test modules: topk (XLA CPU's total order, checked against
XLA), the async pairs (start / done of all-reduce, all-gather, collective-permute, copy and
the generic async-start), tokens, and tuple / token entry parameters."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs

NAN = np.nan


def topk(t: str, largest: bool) -> str:
    return (f"HloModule m\nENTRY e {{\n  x = {t}[2,6] parameter(0)\n  ROOT t = ({t}[2,3], "
            f"s32[2,3]) topk(x), k=3, largest={'true' if largest else 'false'}\n}}\n")


TOPK_CASES = [  # (type, largest, input row pair, values, indices): XLA CPU's answers
    ("f32", True, [[1, NAN, -0.0, 0.0, 1, -NAN], [-np.inf, 2, 2, np.inf, -1, NAN]],
     [[NAN, 1, 1], [NAN, np.inf, 2]], [[1, 0, 4], [5, 3, 1]]),
    ("f32", False, [[1, NAN, -0.0, 0.0, 1, -NAN], [-np.inf, 2, 2, np.inf, -1, NAN]],
     [[-NAN, -0.0, 0.0], [-np.inf, -1, 2]], [[5, 2, 3], [0, 4, 1]]),
    ("s32", True, [[5, -3, 5, 2**31 - 1, -2**31, 0], [1, 1, 1, 0, 0, 0]],
     [[2**31 - 1, 5, 5], [1, 1, 1]], [[3, 0, 2], [0, 1, 2]]),
    ("u8", False, [[5, 3, 5, 255, 0, 0], [1, 1, 1, 0, 0, 0]],
     [[0, 0, 3], [0, 0, 0]], [[4, 5, 1], [3, 4, 5]]),
]
DTYPES = {"f32": np.float32, "s32": np.int32, "u8": np.uint8, "bf16": ml_dtypes.bfloat16}


@pytest.mark.parametrize("t, largest, rows, values, indices", TOPK_CASES)
def test_topk_orders_as_xla_cpu(t: str, largest: bool, rows: list, values: list,
                                indices: list) -> None:
    x = np.array([rows], dtype=np.float64).astype(DTYPES[t])
    got_values, got_indices = evaluate_module(parse_module(topk(t, largest)), [x], 1)
    np.testing.assert_array_equal(got_values[0].astype(np.float64), values)
    assert np.signbit(got_values[0].astype(np.float64)).tolist() == \
        np.signbit(np.array(values, np.float64)).tolist()
    assert got_indices[0].tolist() == indices and got_indices.dtype == np.int32


@pytest.mark.oracle
def test_topk_equals_xla_on_random_rows() -> None:
    from tilecc.hlo.xla import XlaJob, run_many_on_xla
    pytest.importorskip("jax")
    cases = []
    for t in ("f32", "bf16", "s32"):
        for largest in (True, False):
            m = parse_module(topk(t, largest))
            cases.append((m, random_inputs(m, 1, 7), topk(t, largest)))
    results = run_many_on_xla([XlaJob("run", text, x, 1) for _, x, text in cases])
    for (m, x, _), want in zip(cases, results):
        assert isinstance(want, list)
        got = evaluate_module(m, x, 1)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0].astype(np.float64), want[0].astype(np.float64))


def topk_custom_call(dims: str, k: int) -> str:
    lead = dims.rsplit(",", 1)[0] + "," if "," in dims else ""
    return ("HloModule m\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
            "  ROOT r = pred[] compare(a, b), direction=GT\n}\n"
            f"ENTRY e {{\n  x = f32[{dims}] parameter(0)\n  ROOT t = (f32[{lead}{k}], "
            f"s32[{lead}{k}]) custom-call(x), custom_call_target=\"TopK\", "
            "called_computations={cmp}\n}\n")


def test_topk_custom_call_takes_the_largest_in_total_order() -> None:
    # XLA CPU's answer (runtime_topk.cc): -NaN < -inf < -0 < +0 < inf < NaN, ties by index
    row = [1, NAN, -0.0, 0.0, -NAN, -np.inf, 1]
    values, indices = evaluate_module(parse_module(topk_custom_call("7", 7)),
                                      [np.array([row], np.float32)], 1)
    assert indices[0].tolist() == [1, 0, 6, 3, 2, 5, 4]
    assert np.signbit(values[0]).tolist() == [False, False, False, False, True, True, True]


def test_topk_custom_call_refuses_a_result_that_does_not_fit() -> None:
    text = topk_custom_call("2,6", 3).replace("(f32[2,3], s32[2,3])", "(f32[2,3], s32[2,2])")
    with pytest.raises(InterpError, match=r"t: custom-call TopK takes one array x\[\.\.\., n\]"):
        evaluate_module(parse_module(text), [np.zeros((1, 2, 6), np.float32)], 1)


@pytest.mark.oracle
def test_topk_custom_call_equals_xla() -> None:
    from tilecc.hlo.xla import XlaJob, run_many_on_xla
    pytest.importorskip("jax")
    cases = []
    for dims, k in (("9", 4), ("3,8", 8), ("5,7", 1)):
        m = parse_module(topk_custom_call(dims, k))
        cases.append((m, random_inputs(m, 1, 3), topk_custom_call(dims, k)))
    results = run_many_on_xla([XlaJob("run", text, x, 1) for _, x, text in cases])
    for (m, x, _), want in zip(cases, results):
        assert isinstance(want, list), want
        got = evaluate_module(m, x, 1)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0].view(np.int32), want[0].view(np.int32))


ASYNC = """HloModule m, replica_count=4

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

wrapped {
  w = s32[2] parameter(0)
  ROOT n = s32[2] negate(w)
}

ENTRY e {
  p = s32[2] parameter(0)
  ars = s32[2] all-reduce-start(p), replica_groups={{0,1},{2,3}}, to_apply=add
  ar = s32[2] all-reduce-done(ars)
  ags = (s32[2], s32[4]) all-gather-start(p), replica_groups={{0,1},{2,3}}, dimensions={0}
  ag = s32[4] all-gather-done(ags)
  cps = (s32[2], s32[2], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  cp = s32[2] collective-permute-done(cps)
  cs = (s32[2], s32[2], u32[]) copy-start(p)
  c = s32[2] copy-done(cs)
  as = ((s32[2]), s32[2], s32[]) async-start(p), calls=wrapped
  au = ((s32[2]), s32[2], s32[]) async-update(as)
  ad = s32[2] async-done(au)
  tok = token[] after-all()
  ROOT t = (s32[2], s32[4], s32[2], s32[2], s32[2]) tuple(ar, ag, cp, c, ad)
}
"""


def test_async_pairs_compute_their_synchronous_operation() -> None:
    x = np.array([[1, -2], [10, 20], [100, 200], [2**31 - 1, 0]], np.int32)
    ar, ag, cp, c, ad = evaluate_module(parse_module(ASYNC), [x], 4)
    assert ar.tolist() == [[11, 18], [11, 18], [-2147483549, 200], [-2147483549, 200]]  # wraps
    assert ag.tolist() == [[1, -2, 10, 20]] * 2 + [[100, 200, 2**31 - 1, 0]] * 2
    assert cp.tolist() == [[2**31 - 1, 0], [1, -2], [10, 20], [100, 200]]
    assert c.tolist() == x.tolist()
    assert ad.tolist() == (-x.astype(np.int64)).astype(np.int32).tolist()


def test_tuple_and_token_parameters_take_nested_inputs() -> None:
    m = parse_module("HloModule m\nENTRY e {\n  p = (f32[2], (s32[], token[])) parameter(0)\n"
                     "  a = f32[2] get-tuple-element(p), index=0\n"
                     "  b = (s32[], token[]) get-tuple-element(p), index=1\n"
                     "  n = s32[] get-tuple-element(b), index=0\n"
                     "  ROOT t = (f32[2], s32[]) tuple(a, n)\n}\n")
    x = (np.array([[1.5, -2]], np.float32), (np.array([7], np.int32), np.zeros((1, 0), bool)))
    a, n = evaluate_module(m, [x], 1)
    assert a.tolist() == [[1.5, -2.0]] and n.tolist() == [7]
    inputs = random_inputs(m, 2, 0)
    assert inputs[0][0].shape == (2, 2) and inputs[0][1][1].shape == (2, 0)
    evaluate_module(m, inputs, 2)
    with pytest.raises(InterpError, match=r"parameter 0 \(p\[1\]\[0\]: s32\[\]\) must be"):
        evaluate_module(m, [(x[0], (np.array([7], np.int64), x[1][1]))], 1)
    with pytest.raises(InterpError, match="must be a tuple of 2 values"):
        evaluate_module(m, [x[0]], 1)
