"""bf16 values XLA CPU keeps in f32 (interp.excess_precision): a convert to f32 of a bf16
elementwise instruction, and a bf16 all-reduce / reduce-scatter of one, read the unrounded
f32 result; every other reader gets the bf16 value. Golden cases here, and each form (and
each "no change" neighbour) checked against XLA CPU on random values."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.xla import XlaJob, run_many_on_xla

BF16 = ml_dtypes.bfloat16
DEVICES = 4
# 1 + 2^-7 is a bf16; its square 1 + 2^-6 + 2^-14 is not (bf16 rounds it to 1 + 2^-6)
ODD = np.array([1 + 2**-7], BF16)
SQUARE = np.float32(1 + 2**-6 + 2**-14)


def _module(body: str, kind: str = "bf16", replicas: int = 1) -> str:
    return f"""HloModule m, replica_count={replicas}
add {{
  a = {kind}[] parameter(0)
  b = {kind}[] parameter(1)
  ROOT s = {kind}[] add(a, b)
}}
ENTRY e {{
  x = {kind}[8] parameter(0)
  y = {kind}[8] parameter(1)
{body}}}
"""


CASES = {  # name -> (entry body, element type of x and y, replicas)
    "convert_of_multiply": (
        "  m = bf16[8] multiply(x, y)\n  ROOT c = f32[8] convert(m)\n", "bf16", 1),
    "convert_of_exp": ("  m = bf16[8] exponential(x)\n  ROOT c = f32[8] convert(m)\n",
                       "bf16", 1),
    "convert_of_divide": ("  m = bf16[8] divide(x, y)\n  ROOT c = f32[8] convert(m)\n",
                          "bf16", 1),
    "all_reduce_of_multiply": (
        "  m = bf16[8] multiply(x, y)\n"
        "  ROOT r = bf16[8] all-reduce(m), replica_groups={}, to_apply=add\n", "bf16",
        DEVICES),
    "reduce_scatter_of_subtract": (
        "  m = bf16[8] subtract(x, y)\n  ROOT r = bf16[2] reduce-scatter(m), "
        "replica_groups={}, dimensions={0}, to_apply=add\n", "bf16", DEVICES),
    "convert_of_dot": (
        "  m = bf16[] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
        "  ROOT c = f32[] convert(m)\n", "bf16", 1),
    "all_reduce_start_of_multiply": (
        "  m = bf16[8] multiply(x, y)\n"
        "  s = bf16[8] all-reduce-start(m), replica_groups={}, to_apply=add\n"
        "  ROOT r = bf16[8] all-reduce-done(s)\n", "bf16", DEVICES),
    # no change: the rounded bf16 value is read
    "tuple_all_reduce": (
        "  m = bf16[8] multiply(x, y)\n  n = bf16[8] multiply(y, y)\n"
        "  ROOT r = (bf16[8], bf16[8]) all-reduce(m, n), replica_groups={}, to_apply=add\n",
        "bf16", DEVICES),
    "add_of_multiply": ("  m = bf16[8] multiply(x, y)\n  ROOT c = bf16[8] add(m, y)\n",
                        "bf16", 1),
    "convert_to_f64": ("  m = bf16[8] multiply(x, y)\n  ROOT c = f64[8] convert(m)\n",
                       "bf16", 1),
    "convert_of_reshape": (
        "  m = bf16[8] multiply(x, y)\n  r = bf16[2,4] reshape(m)\n"
        "  ROOT c = f32[2,4] convert(r)\n", "bf16", 1),
    "convert_of_f16_multiply": (
        "  m = f16[8] multiply(x, y)\n  ROOT c = f32[8] convert(m)\n", "f16", 1),
    "multiply_of_all_reduce": (
        "  r = bf16[8] all-reduce(x), replica_groups={}, to_apply=add\n"
        "  ROOT m = bf16[8] multiply(r, y)\n", "bf16", DEVICES),
    "all_reduce_of_rounded_f32": (
        "  f = f32[8] convert(x)\n  g = f32[8] multiply(f, f)\n  m = bf16[8] convert(g)\n"
        "  ROOT r = bf16[8] all-reduce(m), replica_groups={}, to_apply=add\n", "bf16",
        DEVICES),
    "multiply_used_twice": (
        "  m = bf16[8] multiply(x, y)\n  c = f32[8] convert(m)\n"
        "  r = bf16[8] all-reduce(m), replica_groups={}, to_apply=add\n"
        "  ROOT t = (f32[8], bf16[8], bf16[8]) tuple(c, r, m)\n", "bf16", DEVICES),
}

LIBM_ROUNDING = {"convert_of_exp", "convert_of_dot"}
"""The interpreter's f32 exp and f32 dot may be an ulp from XLA CPU's (a bf16 rounding is
2^-8 away)."""


def _run(name: str, x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    body, kind, replicas = CASES[name]
    return evaluate_module(parse_module(_module(body, kind, replicas)), [x, y], replicas)


def _lanes(value: np.ndarray, devices: int = 1) -> np.ndarray:
    return np.tile(value, (devices, 8 // value.size))


def test_a_convert_to_f32_reads_the_unrounded_product() -> None:
    x = _lanes(ODD)
    assert (_run("convert_of_multiply", x, x)[0] == SQUARE).all()


def test_other_readers_get_the_rounded_product() -> None:
    x = _lanes(ODD)
    rounded = np.float32(1 + 2**-6)
    assert (_run("convert_to_f64", x, x)[0] == rounded).all()
    assert (_run("convert_of_reshape", x, x)[0] == rounded).all()
    c, r, m = _run("multiply_used_twice", _lanes(ODD, DEVICES), _lanes(ODD, DEVICES))
    assert (c == SQUARE).all() and (m.astype(np.float32) == rounded).all()


def test_an_all_reduce_sums_the_unrounded_products_and_rounds_once() -> None:
    # devices 0 and 1 multiply to 1 + 2^-6 + 2^-14 and 1 - 2^-7 (the others to 0): the
    # rounded products would sum to 2 + 2^-7, a tie that rounds to 2 (even); the unrounded
    # sum is past the tie and rounds to 2 + 2^-6
    x = np.repeat(np.array([[1 + 2**-7], [1 - 2**-7], [0], [0]], BF16), 8, axis=1)
    y = np.repeat(np.array([[1 + 2**-7], [1], [0], [0]], BF16), 8, axis=1)
    got = _run("all_reduce_of_multiply", x, y)[0].astype(np.float32)
    assert (got == np.float32(2 + 2**-6)).all()


def test_an_f32_product_past_bf16s_largest_stays_finite() -> None:
    # 0x1.02p63 * 0x1.fcp64 = 3.4026e38: an f32, but bf16 rounds it to inf
    x = _lanes(np.array([float.fromhex("0x1.02p63")], BF16))
    y = _lanes(np.array([float.fromhex("0x1.fcp64")], BF16))
    got = _run("convert_of_multiply", x, y)[0]
    assert np.isfinite(got).all() and (got == np.float32(3.402616e38)).all()
    assert np.isinf(_run("convert_to_f64", x, y)[0]).all()


def test_nan_and_signed_zero_pass_through() -> None:
    x = _lanes(np.array([np.nan, -0.0, 0.5, -np.inf], BF16))
    y = _lanes(np.array([1.0, 0.5, -0.0, 2.0], BF16))
    got = _run("convert_of_multiply", x, y)[0][0]
    assert np.isnan(got[0]) and got[1] == 0 and np.signbit(got[1:3]).all()
    assert got[3] == -np.inf


@pytest.mark.oracle
def test_excess_precision_matches_xla() -> None:
    rng = np.random.default_rng(11)
    jobs, inputs = [], []
    for name, (body, kind, replicas) in CASES.items():
        dtype = BF16 if kind == "bf16" else np.float16
        x, y = (rng.uniform(-2, 2, (replicas, 8)).astype(dtype) for _ in range(2))
        inputs.append((name, x, y))
        jobs.append(XlaJob("run", _module(body, kind, replicas), [x, y], replicas))
    for (name, x, y), want in zip(inputs, run_many_on_xla(jobs)):
        assert isinstance(want, list), want
        for got, expected in zip(_run(name, x, y), want):
            if name in LIBM_ROUNDING:
                np.testing.assert_allclose(got, expected, rtol=2e-7, atol=0, err_msg=name)
            else:
                np.testing.assert_array_equal(got, expected, err_msg=name)
