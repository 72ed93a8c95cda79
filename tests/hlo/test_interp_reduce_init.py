"""reduce with a non-identity init value: the interpreter applies it as often as XLA CPU
(never for one element, once per 32-wide window of the tree rewrite and once more, once for
f32 / f64 operands of >= 4096 elements), checked against XLA on the boundary sizes."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilecc.hlo.interp.reduce import init_uses
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.parser import parse_module
from tilecc.hlo.types import PrimitiveType as P
from tilecc.hlo.xla import XlaJob, run_many_on_xla

DTYPES = {"s8": np.int8, "u8": np.uint8, "s32": np.int32, "s64": np.int64,
          "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}


def _module(t: str, dims: tuple[int, ...], axes: tuple[int, ...], init: str, op: str,
            layout: str = "") -> str:
    kept = ",".join(str(d) for i, d in enumerate(dims) if i not in axes)
    return f"""HloModule m
red {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT c = {t}[] {op}(a, b)
}}
ENTRY e {{
  p = {t}[{",".join(map(str, dims))}]{layout} parameter(0)
  i = {t}[] constant({init})
  ROOT r = {t}[{kept}] reduce(p, i), dimensions={{{",".join(map(str, axes))}}}, to_apply=red
}}
"""


CASES = [  # (type, dims, reduced axes, init, reducer, layout)
    *[("s32", (n,), (0,), "100", "add", "") for n in (1, 2, 32, 33, 64, 65, 1025, 5000)],
    ("s32", (40, 50), (0, 1), "-7", "add", ""), ("s32", (10, 100), (0, 1), "3", "add", ""),
    ("s32", (40, 50), (0,), "9", "add", "{0,1}"), ("s32", (1000, 40), (0, 1), "1", "add", ""),
    ("s32", (10, 10, 10), (0, 2), "5", "add", ""), ("s32", (1, 100), (0, 1), "2", "add", ""),
    ("s8", (4000,), (0,), "3", "add", ""), ("u8", (300,), (0,), "200", "add", ""),
    ("s64", (4096,), (0,), "-5", "add", ""), ("s32", (100,), (0,), "3", "multiply", ""),
    ("s32", (100,), (0,), "5", "xor", ""), ("s32", (64,), (0,), "5", "xor", ""),
    ("s32", (1,), (0,), "5", "maximum", ""), ("s32", (3,), (0,), "5", "maximum", ""),
    *[("f32", (n,), (0,), "100", "add", "") for n in (1, 33, 1025, 4095, 4096)],
    ("f32", (2, 2000), (1,), "0.5", "add", ""), ("f32", (70, 70), (0, 1), "0.5", "add", ""),
    ("f64", (64, 64), (0, 1), "0.25", "add", ""), ("f64", (33, 33), (0, 1), "0.25", "add", ""),
    ("f32", (64, 64), (1,), "0.5", "add", ""), ("f32", (3, 3, 500), (2,), "0.5", "add", ""),
    ("f16", (100,), (0,), "1", "add", ""), ("bf16", (40, 50), (0, 1), "1", "add", ""),
]


PRODUCTS = [("f32", (4096,), (0,), "1.01", "multiply", ""),
            ("f32", (4095,), (0,), "1.01", "multiply", ""),
            ("f64", (5000,), (0,), "1.001", "multiply", "")]


def _input(t: str, dims: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dtype = DTYPES[t]
    if t.startswith(("s", "u")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, (1,) + dims, dtype=dtype, endpoint=True)
    # small integers: float sums are exact in any order, so only the init count can differ
    return rng.integers(-4, 5, (1,) + dims).astype(dtype)


def test_init_uses_follow_the_tree_rewrite() -> None:
    assert [init_uses(Op.ADD, P.S32, [n], n, 32) for n in (2, 32, 33, 1024, 1025, 40000)] == \
        [1, 1, 3, 33, 36, 1293]
    assert init_uses(Op.ADD, P.S32, [40, 50], 2000, 32) == 5
    assert init_uses(Op.ADD, P.S32, [1000, 40], 40000, 32) == 65
    assert init_uses(Op.ADD, P.F32, [4095], 4095, 32) == 133
    assert init_uses(Op.ADD, P.F32, [4096], 4096, 32) == 1
    assert init_uses(Op.ADD, P.F32, [2000], 4000, 32) == 66 and init_uses(Op.ADD, P.F32, [2000], 6000, 32) == 1
    assert init_uses(Op.ADD, P.BF16, [4096], 4096, 32) == 133
    assert init_uses(Op.MULTIPLY, P.F32, [4096], 4096, 32) == 133


@pytest.mark.oracle
def test_non_identity_init_matches_xla() -> None:
    texts = [_module(*case) for case in CASES]
    inputs = [[_input(case[0], case[1], k)] for k, case in enumerate(CASES)]
    results = run_many_on_xla([XlaJob("run", text, x) for text, x in zip(texts, inputs)])
    for case, text, x, want in zip(CASES, texts, inputs, results):
        assert isinstance(want, list), (case, want)
        got = evaluate_module(parse_module(text), x, 1)[0]
        assert got.dtype == want[0].dtype, case
        np.testing.assert_array_equal(got.astype(np.float64), want[0].astype(np.float64),
                                      err_msg=str(case))


@pytest.mark.oracle
def test_float_products_keep_the_window_count_at_any_size() -> None:
    # products of ones: only the init's power can differ; it is rounded once here and
    # step by step on XLA CPU, hence the relative tolerance
    texts = [_module(*case) for case in PRODUCTS]
    inputs = [[np.ones((1,) + case[1], DTYPES[case[0]])] for case in PRODUCTS]
    results = run_many_on_xla([XlaJob("run", text, x) for text, x in zip(texts, inputs)])
    for case, text, x, want in zip(PRODUCTS, texts, inputs, results):
        assert isinstance(want, list), (case, want)
        got = evaluate_module(parse_module(text), x, 1)[0]
        assert float(want[0].item()) > 1.1, case
        np.testing.assert_allclose(got, want[0], rtol=1e-5, err_msg=str(case))
