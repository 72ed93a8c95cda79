"""random_inputs: deterministic per seed, full range, extremes present, one slice per device."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import loop_safe, random_inputs

TEXT = """HloModule r
ENTRY e {
  a = s32[64,64] parameter(0)
  b = u8[4096] parameter(1)
  c = f32[4096] parameter(2)
  d = bf16[4096] parameter(3)
  e = pred[4096] parameter(4)
  f = s64[4096] parameter(5)
  ROOT t = (s32[64,64], u8[4096], f32[4096], bf16[4096], pred[4096], s64[4096]) tuple(a, b, c, d, e, f)
}
"""


def test_shapes_dtypes_and_determinism() -> None:
    module = parse_module(TEXT)
    first = random_inputs(module, 3, seed=11)
    again = random_inputs(module, 3, seed=11)
    other = random_inputs(module, 3, seed=12)
    dtypes = [np.int32, np.uint8, np.float32, ml_dtypes.bfloat16, np.bool_, np.int64]
    for x, y, z, dtype in zip(first, again, other, dtypes):
        assert x.dtype == np.dtype(dtype) and x.shape[0] == 3
        assert x.tobytes() == y.tobytes()
        assert x.tobytes() != z.tobytes()
    assert first[0].shape == (3, 64, 64)
    assert not np.array_equal(first[0][0], first[0][1])  # devices get their own values


@pytest.mark.parametrize("index, dtype", [(0, np.int32), (1, np.uint8), (5, np.int64)])
def test_integer_extremes_and_spread(index: int, dtype: type) -> None:
    x = random_inputs(parse_module(TEXT), 2, seed=3)[index]
    info = np.iinfo(dtype)
    values = set(x.reshape(-1).tolist())
    assert {int(info.min), int(info.max), 0, 1}.issubset(values)
    if info.min < 0:
        assert -1 in values
    # the rest covers the full range, not just small numbers
    assert (x.astype(np.float64) > info.max / 2).any() and (x.astype(np.float64) < info.min / 2 + 1).any()


@pytest.mark.parametrize("index", [2, 3])
def test_float_specials(index: int) -> None:
    x = random_inputs(parse_module(TEXT), 2, seed=5)[index].astype(np.float64)
    assert np.isnan(x).any() and np.isposinf(x).any() and np.isneginf(x).any()
    assert (x == 0).any() and (np.signbit(x) & (x == 0)).any()
    finite = x[np.isfinite(x) & (x != 0)]
    assert np.abs(finite).max() > 1e30 and np.abs(finite).min() < 1e-30


def test_pred_has_both_values() -> None:
    x = random_inputs(parse_module(TEXT), 1, seed=0)[4]
    assert x.any() and not x.all()


def test_token_parameter_gets_the_interpreters_token() -> None:
    module = parse_module("HloModule t\nENTRY e { p = token[] parameter(0)\n"
                          "  ROOT c = s32[] constant(1) }")
    (token,) = random_inputs(module, 3, seed=0)
    assert token.shape == (3, 0) and token.dtype == np.bool_
    assert evaluate_module(module, [token], 3)[0].tolist() == [1, 1, 1]
    with pytest.raises(InterpError, match=r"parameter 0 \(p: token\[\]\) must be bool\[3, 0\]"):
        evaluate_module(module, [np.zeros((3, 1), np.bool_)], 3)


def test_complex_parts_are_independent_floats_with_specials() -> None:
    module = parse_module("HloModule c\nENTRY e { a = c64[2048] parameter(0)\n"
                          "  b = c128[8] parameter(1)\n"
                          "  ROOT t = (c64[2048], c128[8]) tuple(a, b) }")
    a, b = random_inputs(module, 2, seed=4)
    assert a.dtype == np.complex64 and a.shape == (2, 2048)
    assert b.dtype == np.complex128 and b.shape == (2, 8)
    for part in (a.real, a.imag):
        assert np.isnan(part).any() and np.isinf(part).any() and (part == 0).any()
    assert not np.array_equal(a.real, a.imag)
    assert random_inputs(module, 2, seed=4)[0].tobytes() == a.tobytes()



@pytest.mark.parametrize("type_name, dtype, low, high", [
    ("s4", ml_dtypes.int4, -8, 7), ("u4", ml_dtypes.uint4, 0, 15),
    ("s2", ml_dtypes.int2, -2, 1), ("u2", ml_dtypes.uint2, 0, 3)])
def test_sub_byte_integers_cover_their_whole_range(type_name: str, dtype: type, low: int,
                                                   high: int) -> None:
    module = parse_module(f"HloModule s\nENTRY e {{ ROOT a = {type_name}[512] parameter(0) }}")
    (x,) = random_inputs(module, 2, seed=6)
    assert x.dtype == np.dtype(dtype) and x.shape == (2, 512)
    assert set(x.astype(np.int64).reshape(-1).tolist()) == set(range(low, high + 1))
    assert random_inputs(module, 2, seed=6)[0].tobytes() == x.tobytes()


def test_loop_safe_folds_sub_byte_loop_bounds() -> None:
    module = parse_module("""HloModule w
cond { p = s4[] parameter(0)  z = s4[] constant(0)
       ROOT lt = pred[] compare(z, p), direction=LT }
body { p = s4[] parameter(0)  one = s4[] constant(1)  ROOT d = s4[] subtract(p, one) }
ENTRY e { n = s4[] parameter(0)  ROOT w = s4[] while(n), condition=cond, body=body }
""")
    x = np.array([-7, 7, -3], ml_dtypes.int4)  # device 0's |-7| % 4 = 3 for every device
    (folded,) = loop_safe(module, [x])
    assert folded.dtype == x.dtype and folded.astype(np.int64).tolist() == [3, 3, 3]


def test_an_unbounded_dynamic_dimension_is_refused_by_name() -> None:
    module = parse_module("HloModule d\nENTRY e { ROOT p = f32[?] parameter(0) }")
    with pytest.raises(InterpError, match=r"p: f32\[\?\]\S* has an unbounded dynamic dimension"):
        random_inputs(module, 1, seed=0)
