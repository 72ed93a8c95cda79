"""batch-norm-training / -inference / -grad: golden values from the formulas, refusals, and
the interpreter against XLA CPU over element types, feature axes, shapes and NaN / inf."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.xla import XlaJob, run_many_on_xla

TYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16, "f64": np.float64}


def training(t: str, dims: tuple[int, ...], feature: int, epsilon: float = 0.001) -> str:
    d, c = ",".join(map(str, dims)), dims[feature]
    return f"""HloModule m
ENTRY e {{
  x = {t}[{d}] parameter(0)
  s = {t}[{c}] parameter(1)
  o = {t}[{c}] parameter(2)
  ROOT b = ({t}[{d}], {t}[{c}], {t}[{c}]) batch-norm-training(x, s, o),
      epsilon={epsilon}, feature_index={feature}
}}
"""


def inference(t: str, dims: tuple[int, ...], feature: int, epsilon: float = 0.001) -> str:
    d, c = ",".join(map(str, dims)), dims[feature]
    return f"""HloModule m
ENTRY e {{
  x = {t}[{d}] parameter(0)
  s = {t}[{c}] parameter(1)
  o = {t}[{c}] parameter(2)
  m = {t}[{c}] parameter(3)
  v = {t}[{c}] parameter(4)
  ROOT b = {t}[{d}] batch-norm-inference(x, s, o, m, v), epsilon={epsilon}, feature_index={feature}
}}
"""


def grad(t: str, dims: tuple[int, ...], feature: int, epsilon: float = 0.001) -> str:
    d, c = ",".join(map(str, dims)), dims[feature]
    return f"""HloModule m
ENTRY e {{
  x = {t}[{d}] parameter(0)
  s = {t}[{c}] parameter(1)
  m = {t}[{c}] parameter(2)
  v = {t}[{c}] parameter(3)
  dy = {t}[{d}] parameter(4)
  ROOT b = ({t}[{d}], {t}[{c}], {t}[{c}]) batch-norm-grad(x, s, m, v, dy),
      epsilon={epsilon}, feature_index={feature}
}}
"""


def run(text: str, *inputs: np.ndarray) -> list[np.ndarray]:
    return [r[0] for r in evaluate_module(parse_module(text), [x[None] for x in inputs], 1)]


def test_training_golden_on_the_last_axis() -> None:
    # XLA's own parser test module: features 1, 3, 5, 7 and 2, 4, 6, 8
    x = np.arange(1, 9, dtype=np.float32).reshape(2, 2, 1, 2)
    scale, offset = np.array([2, 3], np.float32), np.array([1, 2], np.float32)
    y, mean, var = run(training("f32", (2, 2, 1, 2), 3), x, scale, offset)
    np.testing.assert_array_equal(mean, [4, 5])
    np.testing.assert_array_equal(var, [5, 5])  # E[x^2] - E[x]^2, no Bessel correction
    want = (x - [4, 5]) / math.sqrt(5.001) * scale + offset
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_inference_golden_on_the_first_axis() -> None:
    x = np.array([[1.0, -2.0, 3.0], [4.0, 0.5, -6.0]], np.float32)
    scale, offset = np.array([2.0, -1.0], np.float32), np.array([0.5, 3.0], np.float32)
    mean, var = np.array([1.0, -1.0], np.float32), np.array([4.0, 0.25], np.float32)
    (y,) = run(inference("f32", (2, 3), 0, 0.0), x, scale, offset, mean, var)
    want = (x - mean[:, None]) / np.sqrt(var[:, None]) * scale[:, None] + offset[:, None]
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_grad_golden_against_the_formula() -> None:
    rng = np.random.default_rng(0)
    x, dy = rng.normal(size=(3, 4, 5)), rng.normal(size=(3, 4, 5))
    scale, mean, var = rng.normal(size=4), rng.normal(size=4), rng.uniform(0.5, 2, 4)
    dx, dscale, doffset = run(grad("f64", (3, 4, 5), 1), x, scale, mean, var, dy)
    b = (slice(None), None)  # a per-feature vector along axis 1 of (3, 4, 5)
    eps = float(np.float32(0.001))  # the f32 attribute, converted to the type
    n, centered, rs = 15, x - mean[b], 1 / np.sqrt(var[b] + eps)
    np.testing.assert_allclose(doffset, dy.sum((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(dscale, (dy * centered).sum((0, 2)) * rs[:, 0], rtol=1e-12)
    want = scale[b] * rs / n * (dy * n - dy.sum((0, 2))[b] - centered *
                                (dy * centered).sum((0, 2))[b] / (var[b] + eps))
    np.testing.assert_allclose(dx, want, rtol=1e-10, atol=1e-12)


def test_nan_and_inf_stay_in_their_feature() -> None:
    x = np.array([[1.0, np.nan, np.inf], [3.0, 2.0, 1.0]], np.float32)
    y, mean, var = run(training("f32", (3, 2), 1), x.T.copy(), np.ones(2, np.float32),
                       np.zeros(2, np.float32))
    assert np.isnan(mean[0]) and np.isnan(var[0]) and np.isnan(y[:, 0]).all()
    third = np.float32(1) / np.float32(3)  # x / N is x * (1 / N) on XLA CPU
    assert mean[1] == np.float32(6) * third
    assert var[1] == np.float32(14) * third - mean[1] * mean[1]
    assert np.isfinite(y[:, 1]).all()


@pytest.mark.parametrize("text, want", [
    (training("f32", (2, 3), 1).replace("feature_index=1", "feature_index=2"),
     "feature_index=2 is outside the operand's rank 2"),
    (training("s32", (2, 3), 1), "needs a floating-point operand, got s32"),
    (training("f32", (2, 3), 1).replace("epsilon=0.001, ", ""), "needs the attributes"),
])
def test_bad_instructions_are_refused_with_one_line(text: str, want: str) -> None:
    x = np.zeros((1, 2, 3), np.int32 if "s32" in text else np.float32)
    feature = np.zeros((1, 3), x.dtype)
    with pytest.raises(InterpError, match=want):
        evaluate_module(parse_module(text), [x, feature, feature], 1)


SHAPES = [((4, 3), 1), ((5, 7, 3), 0), ((2, 40, 3), 2), ((70, 4), 1), ((16, 80), 1),
          ((3, 5, 2, 4), 2), ((6,), 0)]
"""(dims, feature_index): the feature first, in the middle and last; more than 32 elements
per feature (XLA CPU's tree reduction); one element per feature."""


def oracle_cases() -> list[tuple[str, str, str, list[np.ndarray]]]:
    """(type, op, text, inputs); x holds a NaN and an inf in the f32 cases' first feature."""
    rng = np.random.default_rng(7)
    cases = []
    for t, dtype in TYPES.items():
        for dims, feature in SHAPES:
            c = dims[feature]
            x, dy = rng.normal(size=dims), rng.normal(size=dims)
            if t == "f32" and len(dims) > 1:
                first = [slice(None)] * len(dims)
                first[feature] = 0
                x[tuple(first)].flat[:2] = (np.nan, np.inf)
            scale, offset, mean = (rng.normal(size=c) for _ in range(3))
            var = rng.uniform(0.1, 2, c)
            cast = [v.astype(dtype) for v in (x, scale, offset, mean, var, dy)]
            x_, s_, o_, m_, v_, dy_ = cast
            cases += [(t, "training", training(t, dims, feature), [x_, s_, o_]),
                      (t, "inference", inference(t, dims, feature), [x_, s_, o_, m_, v_]),
                      (t, "grad", grad(t, dims, feature), [x_, s_, m_, v_, dy_])]
    return cases


CASES = oracle_cases()
# bf16 (computed in f32, rounded once) and f16 inference agree bit for bit; f32 / f64 sums
# and rsqrt differ from XLA CPU's in the last bits (the corpus tolerance); f16 training and
# grad over several reduced axes differ by a few f16 ulps (their sums' order)
TOLERANCE = {("bf16", op): (0.0, 0.0) for op in ("training", "inference", "grad")} | {
    ("f16", "inference"): (0.0, 0.0), ("f16", "training"): (4e-3, 4e-3),
    ("f16", "grad"): (2e-2, 2e-2), ("f64", "training"): (1e-12, 1e-12),
    ("f64", "inference"): (1e-12, 1e-12), ("f64", "grad"): (1e-12, 1e-12)}


@pytest.fixture(scope="module")
def xla_results() -> list[object]:
    return run_many_on_xla([XlaJob("run", text, [x[None] for x in inputs], 1)
                            for _, _, text, inputs in CASES])


@pytest.mark.oracle
@pytest.mark.parametrize("index", range(len(CASES)),
                         ids=[f"{t} {op} {k}" for k, (t, op, _, _) in enumerate(CASES)])
def test_interpreter_matches_xla(index: int, xla_results: list[object]) -> None:
    t, op, text, inputs = CASES[index]
    want = xla_results[index]
    if isinstance(want, Exception):
        raise want
    got = evaluate_module(parse_module(text), [x[None] for x in inputs], 1)
    assert isinstance(want, list) and len(got) == len(want)
    rtol, atol = TOLERANCE.get((t, op), (2e-6, 1e-6))
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True, err_msg=f"{t} {op} out{k}")
