"""reduce-window: the init value once per output element, padding and base-dilation holes
skipped (not filled with the init and combined), window positions combined row-major
(interp.reduce_window). Golden values computed by hand with init 1 and add, where every
extra use of the init shows; random operands checked against XLA CPU, bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilecc.hlo.interp.reduce_order import window_axis_order
from tilecc.hlo.interp.reduce_window import WindowGeometry
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.xla import XlaJob, run_many_on_xla

DTYPES = {"s32": np.int32, "f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}


def _single(t: str, dims: tuple[int, ...], out: tuple[int, ...], window: str, init: str,
            op: str = "add") -> str:
    return f"""HloModule m
red {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT c = {t}[] {op}(a, b)
}}
ENTRY e {{
  p = {t}[{",".join(map(str, dims))}] parameter(0)
  i = {t}[] constant({init})
  ROOT r = {t}[{",".join(map(str, out))}] reduce-window(p, i), window={{{window}}}, to_apply=red
}}
"""


def _variadic(dims: tuple[int, ...], out: tuple[int, ...], window: str) -> str:
    """(sum, max) of two f32 operands from the inits (1, 5), as a computation."""
    d, o = ",".join(map(str, dims)), ",".join(map(str, out))
    return f"""HloModule m
red {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  s = f32[] add(a, c)
  m = f32[] maximum(b, d)
  ROOT t = (f32[], f32[]) tuple(s, m)
}}
ENTRY e {{
  p = f32[{d}] parameter(0)
  q = f32[{d}] parameter(1)
  i = f32[] constant(1)
  j = f32[] constant(5)
  ROOT r = (f32[{o}], f32[{o}]) reduce-window(p, q, i, j), window={{{window}}}, to_apply=red
}}
"""


def _run(text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return evaluate_module(parse_module(text), [x[None] for x in inputs], 1)


X = np.array([1, 10, 100, 1000, 10000], np.float32)
GOLDEN = [  # (window, outputs): init 1, add, over X
    ("size=1", [2, 11, 101, 1001, 10001]),  # one element: the init is still used
    ("size=3 pad=1_1", [12, 112, 1111, 11101, 11001]),  # padding adds nothing
    ("size=5 pad=4_0", [2, 12, 112, 1112, 11112]),  # an inclusive scan
    ("size=2 pad=-1_2", [111, 1101, 11001, 10001, 1]),  # negative low pad; all-padding: init
    ("size=2 pad=-1_0", [111, 1101, 11001]),
    ("size=2 lhs_dilate=2", [2, 11, 11, 101, 101, 1001, 1001, 10001]),  # holes add nothing
    ("size=2 rhs_dilate=2", [102, 1011, 10101]),
    ("size=3 stride=2 pad=1_1 rhs_dilate=2", [1011, 1011]),
    ("size=2 stride=3 pad=2_2 lhs_dilate=2", [1, 11, 101, 10001]),
]


@pytest.mark.parametrize("window, want", GOLDEN)
def test_the_init_is_used_once_and_padding_and_holes_are_skipped(window: str,
                                                                  want: list[int]) -> None:
    text = _single("f32", (5,), (len(want),), window, "1")
    np.testing.assert_array_equal(_run(text, [X])[0], [np.array(want, np.float32)])


def test_a_scalar_is_its_own_result_and_the_init_is_not_used() -> None:
    text = _single("s32", (), (), "", "100", "maximum").replace(", window={}", "")
    np.testing.assert_array_equal(_run(text, [np.array(42, np.int32)])[0], [42])


def test_a_window_of_padding_only_is_the_init_for_max() -> None:
    # max from init 5: the padded positions are not 5s, and a padded window is 5
    x = np.array([[1, 7], [2, 3]], np.int32)
    text = _single("s32", (2, 2), (3, 3), "size=2x2 pad=1_1x1_1", "5", "maximum")
    np.testing.assert_array_equal(_run(text, [x])[0][0],
                                  [[5, 7, 7], [5, 7, 7], [5, 5, 5]])


def test_a_variadic_reducer_skips_padding_too() -> None:
    # sums from 1, maxima from 5: [1+1, 1+1+2, 1+2+3, 1+3] and [5, 5, 5, 5] over the pads
    x, y = np.array([1, 2, 3], np.float32), np.array([-1, 9, -2], np.float32)
    got = _run(_variadic((3,), (4,), "size=2 pad=1_1"), [x, y])
    np.testing.assert_array_equal(got[0][0], [2, 4, 6, 4])
    np.testing.assert_array_equal(got[1][0], [5, 9, 9, 5])


def test_a_long_scan_counts_the_init_as_xla_cpus_scan_rewrite_does() -> None:
    # zeros from init 1: each output counts the init's uses (measured on XLA CPU): rows of
    # 16, row r of a 40-long scan uses it 2 + r times; 300 elements make 19 rows, whose
    # totals are scanned by the rewrite again (2, 4, 5, ..., 22)
    got = _run(_single("s32", (40,), (40,), "size=40 pad=39_0", "1"),
               [np.zeros(40, np.int32)])[0][0]
    np.testing.assert_array_equal(got, [2] * 16 + [3] * 16 + [4] * 8)
    got = _run(_single("s32", (300,), (300,), "size=300 pad=299_0", "1"),
               [np.zeros(300, np.int32)])[0][0]
    assert got[:16].tolist() == [2] * 16 and got[16:48:16].tolist() == [4, 5]
    assert got[-12:].tolist() == [22] * 12
    # 16 elements are not rewritten: the init once each
    got = _run(_single("s32", (16,), (16,), "size=16 pad=15_0", "1"),
               [np.zeros(16, np.int32)])[0][0]
    np.testing.assert_array_equal(got, [1] * 16)


def test_the_window_axis_order_is_the_measured_one() -> None:
    # f32 sums matched XLA CPU in these orders only (outermost axis first)
    none, low = (0, 0), (1, 0)
    assert window_axis_order((2, 2, 2), (none, none, low)) == (2, 0, 1)
    assert window_axis_order((2, 2, 2), (none, low, none)) == (1, 0, 2)
    assert window_axis_order((2, 2, 2), (none, low, low)) == (2, 0, 1)
    assert window_axis_order((3, 2, 3), (none, low, low)) == (1, 0, 2)
    assert window_axis_order((2, 2, 3), (none, none, low)) == (0, 1, 2)
    assert window_axis_order((3, 2), (low, none)) == (0, 1)
    assert window_axis_order((2, 2, 2), (none, none, (-1, 0))) == (0, 1, 2)


def test_shape_inference_counts_the_dilated_padded_base() -> None:
    g = WindowGeometry((3, 15), (2, 1), ((7, 5), (2, 6)), (1, 2), (3, 1))
    assert g.out_dims((8, 11)) == (7, 15)
    assert WindowGeometry((4,), (1,), ((0, 0),), (1,), (1,)).out_dims((3,)) == (0,)


ORACLE = [  # (type, dims, out dims, window, init, reducer)
    ("f32", (13, 17), (7, 17), "size=3x2 stride=2x1 pad=1_1x0_1", "0.5", "add"),
    ("f32", (6, 7), (9, 7), "size=2x3 pad=0_-1x1_1 lhs_dilate=2x1", "-0.25", "add"),
    ("f32", (9, 8), (3, 9), "size=2x2 stride=2x1 pad=-1_0x2_1 rhs_dilate=3x2", "1", "add"),
    ("f32", (4, 5, 6), (3, 11, 3), "size=2x3x2 stride=1x1x2 pad=0_0x2_2x1_1 lhs_dilate=1x2x1 "
     "rhs_dilate=1x1x2", "0.5", "maximum"),
    ("f32", (300,), (300,), "size=300 pad=299_0", "1", "add"),
    ("bf16", (40,), (40,), "size=40 pad=39_0", "1", "add"),
    ("f16", (6, 6), (6, 6), "size=3x3 pad=1_1x1_1", "0.5", "add"),
    ("s32", (50000,), (50000,), "size=50000 pad=49999_0", "3", "add"),
    ("f32", (30000,), (30000,), "size=30000 pad=0_29999", "0.5", "maximum"),
    ("f32", (200, 150), (5, 5), "size=120x130 stride=20x5 pad=0_0x0_0", "1", "minimum"),
    ("f32", (5, 6, 7), (4, 6, 7), "size=2x2x2 pad=0_0x1_0x1_0", "0.5", "add"),
    ("f32", (7, 8, 9), (5, 8, 8), "size=3x2x3 pad=0_0x1_0x1_0", "0.5", "add"),
    ("f32", (4, 5, 4, 5), (3, 5, 3, 5), "size=2x2x2x2 pad=0_0x1_0x0_0x1_0", "0.5", "add"),
]


def _input(t: str, dims: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if t == "s32":
        return rng.integers(-1 << 31, 1 << 31, dims, dtype=np.int64).astype(np.int32)
    return rng.uniform(-1, 1, dims).astype(DTYPES[t])


@pytest.mark.oracle
def test_reduce_window_matches_xla() -> None:
    texts = [_single(*case) for case in ORACLE]
    inputs = [[_input(case[0], case[1], k)[None]] for k, case in enumerate(ORACLE)]
    texts.append(_variadic((8, 9), (5, 17), "size=3x2 stride=2x1 pad=1_2x0_1 lhs_dilate=1x2"))
    inputs.append([_input("f32", (1, 8, 9), 90), _input("f32", (1, 8, 9), 91)])
    results = run_many_on_xla([XlaJob("run", text, x) for text, x in zip(texts, inputs)])
    for text, x, want in zip(texts, inputs, results):
        assert isinstance(want, list), (text, want)
        got = evaluate_module(parse_module(text), x, 1)
        assert len(got) == len(want), text
        for g, w in zip(got, want):
            assert g.dtype == w.dtype, text
            np.testing.assert_array_equal(g.astype(np.float64), w.astype(np.float64),
                                          err_msg=text)
