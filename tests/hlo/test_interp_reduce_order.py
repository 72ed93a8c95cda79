"""reduce with a computation reducer that is not associative on NaN (`select(a > b, a, b)`
keeps the right operand when it meets a NaN, so the result depends on the order): the
interpreter folds in XLA CPU's order (interp.reduce_order), golden cases here and checked
against XLA on boundary sizes, single-output and variadic (argmax) forms."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.xla import XlaJob, run_many_on_xla


def _single(dims: tuple[int, ...], axes: tuple[int, ...]) -> str:
    kept = ",".join(str(d) for i, d in enumerate(dims) if i not in axes)
    return f"""HloModule m
gt {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = pred[] compare(a, b), direction=GT
  ROOT s = f32[] select(c, a, b)
}}
ENTRY e {{
  p = f32[{",".join(map(str, dims))}] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[{kept}] reduce(p, z), dimensions={{{",".join(map(str, axes))}}}, to_apply=gt
}}
"""


def _argmax(rows: int, n: int) -> str:
    return f"""HloModule m
gt {{
  a = f32[] parameter(0)
  b = f32[] parameter(2)
  c = pred[] compare(a, b), direction=GT
  s = f32[] select(c, a, b)
  i = s32[] parameter(1)
  j = s32[] parameter(3)
  t = s32[] select(c, i, j)
  ROOT r = (f32[], s32[]) tuple(s, t)
}}
ENTRY e {{
  p = f32[{rows},{n}] parameter(0)
  q = s32[{rows},{n}] parameter(1)
  z = f32[] constant(0)
  y = s32[] constant(-1)
  ROOT r = (f32[{rows}], s32[{rows}]) reduce(p, q, z, y), dimensions={{1}}, to_apply=gt
}}
"""


def _run(text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return evaluate_module(parse_module(text), [x[None] for x in inputs], 1)


def test_one_element_is_the_element_and_the_init_is_not_used() -> None:
    x = np.array([[-0.5], [0.25]], np.float32)
    got = _run(_single((2, 1), (1,)), [x, np.array(0.9, np.float32)])[0]
    np.testing.assert_array_equal(got[0], [-0.5, 0.25])


def test_a_short_single_output_reduce_folds_in_order() -> None:
    # order: ((init > 1 ? init : 1) > NaN ? .. : NaN) > 2 ? .. : 2 -> NaN loses to 2
    x = np.array([[1.0, np.nan, 2.0]], np.float32)
    assert _run(_single((1, 3), (1,)), [x, np.array(0.0, np.float32)])[0][0, 0] == 2.0
    # a NaN last wins: nothing compares greater than it
    x = np.array([[1.0, 2.0, np.nan]], np.float32)
    assert np.isnan(_run(_single((1, 3), (1,)), [x, np.array(0.0, np.float32)])[0][0, 0])


def test_a_long_single_output_reduce_folds_each_32_window_then_the_partials() -> None:
    # 33 elements: two windows of the SAME-padded axis (15 padded in front), x[0:17] and
    # x[17:33]; window 0 peaks at 0.9, window 1 folds 0.1 .. NaN (x[25]) .. 0.1 to 0.1;
    # the partials fold from the init to 0.9. One left-to-right fold would give 0.1 (the
    # NaN resets the running value and only 0.1s follow).
    x = np.full((1, 33), 0.1, np.float32)
    x[0, 0] = 0.9
    x[0, 25] = np.nan
    got = _run(_single((1, 33), (1,)), [x, np.array(0.0, np.float32)])[0][0, 0]
    assert got == np.float32(0.9)
    # 32 elements are one window: one fold, 0.1
    got = _run(_single((1, 32), (1,)), [x[:, :32], np.array(0.0, np.float32)])[0][0, 0]
    assert got == np.float32(0.1)


def test_a_variadic_argmax_folds_every_element_in_order() -> None:
    n = 128
    values = np.linspace(-1, 1, n, dtype=np.float32)[None].copy()
    values[0, 40] = np.nan
    ids = np.arange(n, dtype=np.int32)[None]
    # left to right: NaN at 40 is overtaken by the next element (NaN > x is false), and
    # the maximum after it is the last element; a pairwise tree would pair 40 with 41
    value, index = _run(_argmax(1, n), [values, ids])
    assert index[0, 0] == n - 1 and value[0, 0] == np.float32(1.0)
    values[0, n - 1] = np.nan  # a NaN last: nothing overtakes it
    value, index = _run(_argmax(1, n), [values, ids])
    assert index[0, 0] == n - 1 and np.isnan(value[0, 0])


SINGLE_CASES = [((5, 1), (1,)), ((5, 32), (1,)), ((5, 33), (1,)), ((5, 100), (1,)),
                ((3, 1025), (1,)), ((40, 50), (0, 1)), ((2, 33, 40), (1, 2)), ((70, 3), (0,))]
ARGMAX_CASES = [(64, 1), (64, 33), (64, 128), (16, 1000)]


@pytest.mark.oracle
def test_nan_order_matches_xla() -> None:
    rng = np.random.default_rng(7)
    jobs, inputs = [], []
    for dims, axes in SINGLE_CASES:
        x = rng.uniform(-1, 1, dims).astype(np.float32)
        x[rng.random(dims) < 0.05] = np.nan
        inputs.append([x, np.array(0.9, np.float32)])
        jobs.append(XlaJob("run", _single(dims, axes), [v[None] for v in inputs[-1]]))
    for rows, n in ARGMAX_CASES:
        x = rng.uniform(-1, 1, (rows, n)).astype(np.float32)
        x[rng.random((rows, n)) < 0.03] = np.nan
        inputs.append([x, np.tile(np.arange(n, dtype=np.int32), (rows, 1))])
        jobs.append(XlaJob("run", _argmax(rows, n), [v[None] for v in inputs[-1]]))
    for job, x, want in zip(jobs, inputs, run_many_on_xla(jobs)):
        assert isinstance(want, list), want
        got = _run(job.text, x)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=job.text.splitlines()[-2])
