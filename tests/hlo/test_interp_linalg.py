"""The interpreter's triangular-solve: hand-solved systems for every side, triangle,
transpose_a and unit_diagonal, the triangle and diagonal that are not read, batches on both
of XLA's expansions (inversion of diagonal blocks, direct substitution), XLA's shape rules in
the verifier, and XLA CPU on random and corner values."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from tilecc.errors import InterpError, VerifyError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.verifier import verify_module

NAN = np.nan
TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "c64": np.complex64,
         "c128": np.complex128}


def solve_text(a: str, b: str, attrs: str) -> str:
    return (f"HloModule m\nENTRY e {{\n  a = {a} parameter(0)\n  b = {b} parameter(1)\n"
            f"  ROOT x = {b} triangular-solve(a, b), {attrs}\n}}\n")


def _spelled(t: str, shape: tuple[int, ...]) -> str:
    return f"{t}[{','.join(map(str, shape))}]"


def solve(a: np.ndarray, b: np.ndarray, t: str = "f32", **options: object) -> np.ndarray:
    attrs = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                      for k, v in {"transpose_a": "NO_TRANSPOSE", **options}.items())
    dtype = TYPES[t]
    a, b = np.asarray(a, dtype), np.asarray(b, dtype)
    module = parse_module(solve_text(_spelled(t, a.shape), _spelled(t, b.shape), attrs))
    verify_module(module)
    return evaluate_module(module, [a[None], b[None]], 1)[0][0]


LOWER = [[2, NAN, NAN], [1, 4, NAN], [3, -2, 5]]  # NaN: the triangle that is not read
UPPER = [[2, 1, 3], [NAN, 4, -2], [NAN, NAN, 5]]
X = [1, 2, -1]


@pytest.mark.parametrize("a, lower, transpose, b", [
    (LOWER, True, "NO_TRANSPOSE", [2, 9, -6]),      # a x = b
    (LOWER, True, "TRANSPOSE", [1, 10, -5]),        # a^T x = b
    (UPPER, False, "NO_TRANSPOSE", [1, 10, -5]),
    (UPPER, False, "TRANSPOSE", [2, 9, -6]),
])
def test_left_side_solves_op_a_x_equals_b(a: list, lower: bool, transpose: str,
                                           b: list) -> None:
    x = solve(a, np.array(b)[:, None], left_side=True, lower=lower, transpose_a=transpose)
    np.testing.assert_allclose(x[:, 0], X, rtol=1e-6)


@pytest.mark.parametrize("a, lower, transpose, b", [
    (LOWER, True, "NO_TRANSPOSE", [1, 10, -5]),     # x a = b
    (LOWER, True, "TRANSPOSE", [2, 9, -6]),         # x a^T = b
    (UPPER, False, "NO_TRANSPOSE", [2, 9, -6]),
    (UPPER, False, "ADJOINT", [1, 10, -5]),         # of a real matrix: the transpose
])
def test_right_side_solves_x_op_a_equals_b(a: list, lower: bool, transpose: str,
                                            b: list) -> None:
    x = solve(a, np.array(b)[None, :], left_side=False, lower=lower, transpose_a=transpose)
    np.testing.assert_allclose(x[0], X, rtol=1e-6)


def test_unit_diagonal_reads_no_diagonal() -> None:
    a = [[NAN, NAN, NAN], [1, NAN, NAN], [3, -2, NAN]]  # as [[1,0,0],[1,1,0],[3,-2,1]]
    x = solve(a, np.array([1, 3, -2])[:, None], left_side=True, lower=True, unit_diagonal=True)
    assert x[:, 0].tolist() == X


def test_adjoint_conjugates_a() -> None:
    a = [[2, NAN], [1j, 1 + 1j]]  # conj(a)^T = [[2, -1j], [0, 1-1j]]
    x = solve(a, np.array([3, 1 + 1j])[:, None], "c64", left_side=True, lower=True,
              transpose_a="ADJOINT")
    np.testing.assert_allclose(x[:, 0], [1, 1j], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("batch", [2, 9])  # XLA inverts blocks for 2, substitutes for 9
def test_each_matrix_of_a_batch_is_solved_alone(batch: int) -> None:
    a = np.array([np.nan_to_num(LOWER) * (k + 1) for k in range(batch)])
    b = np.array([[[2], [9], [-6]]] * batch)
    x = solve(a, b, left_side=True, lower=True)
    np.testing.assert_allclose(x[..., 0], [[v / (k + 1) for v in X] for k in range(batch)],
                               rtol=1e-6)


def test_one_by_one_divides_and_an_empty_b_passes_through() -> None:
    assert solve([[4]], [[2], [-8]], lower=True).tolist() == [[0.5], [-2]]
    assert solve([[NAN]], [[2], [-8]], lower=True, unit_diagonal=True).tolist() == [[2], [-8]]
    assert solve(np.zeros((3, 3)), np.zeros((0, 3)), lower=True).shape == (0, 3)


def test_singular_a_gives_what_the_arithmetic_gives_not_an_error() -> None:
    # the inversion scales column 0 by 1 / 0: inf, and 0 * inf is NaN (XLA's values:
    # test_triangular_solve_of_corner_values_equals_xla)
    x = solve([[0, 0], [1, 1]], [[1], [1]], left_side=True, lower=True)
    assert not np.isfinite(x).any()


SHAPE_ERRORS = [  # (a, b, attributes, what XLA says)
    ("f32[3,3]", "f32[3,2]", "left_side=true, lower=true",
     r"transpose_a=None must be one of NO_TRANSPOSE, TRANSPOSE, ADJOINT"),
    ("s32[3,3]", "s32[3,2]", "left_side=true, transpose_a=NO_TRANSPOSE",
     r"a and b must be float or complex of one type"),
    ("f32[3,3]", "f64[3,2]", "left_side=true, transpose_a=NO_TRANSPOSE",
     r"a and b must be float or complex of one type"),
    ("f32[3]", "f32[3]", "left_side=true, transpose_a=NO_TRANSPOSE",
     r"a and b must have one rank of at least 2"),
    ("f32[3,4]", "f32[3,2]", "left_side=true, transpose_a=NO_TRANSPOSE",
     r"a's last two dimensions must be square"),
    ("f32[3,3]", "f32[3,2]", "transpose_a=NO_TRANSPOSE",
     r"b's dimension 1 must be a's 3 \(left_side=false\)"),
    ("f32[2,3,3]", "f32[4,3,2]", "left_side=true, transpose_a=NO_TRANSPOSE",
     r"a and b must have the same batch dimensions"),
    ("f32[3,3]", "f32[3,2]", "left_side=yes, transpose_a=NO_TRANSPOSE",
     r"left_side=yes must be true or false"),
]


@pytest.mark.parametrize("a, b, attrs, message", SHAPE_ERRORS)
def test_verifier_refuses_what_xla_refuses(a: str, b: str, attrs: str, message: str) -> None:
    module = parse_module(solve_text(a, b, attrs))
    with pytest.raises(VerifyError, match=r"^e/x \(triangular-solve\): " + message):
        verify_module(module)
    with pytest.raises(InterpError, match=r"^x \(triangular-solve\): " + message):
        evaluate_module(module, random_inputs(module, 1, 0), 1)


def test_verifier_refuses_a_result_of_another_shape() -> None:
    text = solve_text("f32[3,3]", "f32[3,2]", "left_side=true, transpose_a=TRANSPOSE")
    module = parse_module(text.replace("ROOT x = f32[3,2]", "ROOT x = f32[2,3]"))
    with pytest.raises(VerifyError, match=r"shape is f32\[2,3\]\S*, expected f32\[3,2\]"):
        verify_module(module)


def _uniform(rng: np.random.Generator, t: str, shape: tuple[int, ...]) -> np.ndarray:
    v = rng.uniform(-1, 1, shape)
    return (v + 1j * rng.uniform(-1, 1, shape) if t.startswith("c") else v).astype(TYPES[t])


def _well_conditioned(rng: np.random.Generator, t: str, shape: tuple[int, ...]) -> np.ndarray:
    """Random values in [-1, 1] and a diagonal of magnitude 2 + n: the solve's rounding is
    not blown up by the condition number, so the oracle's bound means something."""
    n = shape[-1]
    sign = np.where(rng.uniform(-1, 1, n) < 0, -1, 1)
    return (_uniform(rng, t, shape) + (2 + n) * np.eye(n) * sign).astype(TYPES[t])


NATIVE_F16 = "avx512_fp16" in (Path("/proc/cpuinfo").read_text()
                               if Path("/proc/cpuinfo").exists() else "")
"""Whether the host computes f16 natively (AVX512-FP16): XLA CPU's code for batches of more
than 8 f16 solves then rounds each step to f16 instead of computing it in f32 (measured on
an Intel Xeon with avx512_fp16: 1-9 of 54 elements of each batched f16 case one or two f16
units apart; the unbatched cases and every case on a CPU without it stay bit for bit)."""


def _oracle_cases(rng: np.random.Generator) -> list[tuple[str, list[np.ndarray], bool]]:
    """(module text, inputs, whether XLA's roundings are reproduced bit for bit: the block
    inversion in f32, f16) for every option on batches that take each of XLA's expansions,
    in f16, f32, f64 and c64."""
    cases = []
    shapes = [("f32", (), 4, 3), ("f32", (2,), 5, 2), ("f32", (9,), 4, 3), ("f32", (2, 5), 3, 2),
              ("f32", (), 1, 3), ("f64", (3,), 4, 2), ("f64", (10,), 3, 2), ("c64", (), 4, 2),
              ("c64", (12,), 3, 3), ("f16", (), 4, 2), ("f16", (9,), 3, 2)]
    options = itertools.product((False, True), (False, True),
                                ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"), (False, True))
    for (t, batch, n, m), (left, lower, transpose, unit) in itertools.product(shapes, options):
        b_shape = batch + ((n, m) if left else (m, n))
        a = _well_conditioned(rng, t, (1,) + batch + (n, n))
        b = _uniform(rng, t, (1,) + b_shape)
        attrs = (f"left_side={str(left).lower()}, lower={str(lower).lower()}, "
                 f"unit_diagonal={str(unit).lower()}, transpose_a={transpose}")
        text = solve_text(_spelled(t, batch + (n, n)), _spelled(t, b_shape), attrs)
        small = int(np.prod(batch, dtype=int)) <= 8
        exact = (t == "f16" and (small or not NATIVE_F16)) or (t == "f32" and small)
        cases.append((text, [a, b], exact))
    return cases


@pytest.mark.oracle
def test_triangular_solve_equals_xla_on_random_values() -> None:
    pytest.importorskip("jax")
    from tilecc.hlo.xla import XlaJob, run_many_on_xla
    cases = _oracle_cases(np.random.default_rng(5))
    results = run_many_on_xla([XlaJob("run", text, x) for text, x, _ in cases])
    for (text, x, exact), want in zip(cases, results):
        assert isinstance(want, list), want
        (got,) = evaluate_module(parse_module(text), x, 1)
        if exact:
            np.testing.assert_array_equal(got, want[0], err_msg=text)
        elif got.dtype == np.float16:  # two f16 units in the last place
            np.testing.assert_allclose(got, want[0], rtol=2e-3, atol=1e-3, err_msg=text)
        else:
            np.testing.assert_allclose(got, want[0], rtol=2e-6, atol=1e-6, err_msg=text)


@pytest.mark.oracle
def test_triangular_solve_of_corner_values_equals_xla() -> None:
    pytest.importorskip("jax")
    from tilecc.hlo.xla import XlaJob, run_many_on_xla
    a = np.array([[[[2, NAN, NAN], [1, 0, NAN], [3, -2, 5]],       # singular, NaN unread
                   [[1, NAN, NAN], [np.inf, 1, NAN], [0, 0, 1]],    # inf in the triangle
                   [[NAN, 7, 7], [1, NAN, 7], [3, -2, NAN]]]], np.float32)  # NaN diagonal
    b = np.array([[[[2, 1], [9, 0], [-6, 1]]] * 3], np.float32)
    cases = []
    for unit, batch in itertools.product((False, True), (3, 9)):
        aa, bb = np.tile(a, (1, batch // 3, 1, 1)), np.tile(b, (1, batch // 3, 1, 1))
        attrs = f"left_side=true, lower=true, unit_diagonal={str(unit).lower()}, " \
                "transpose_a=NO_TRANSPOSE"
        cases.append((solve_text(f"f32[{batch},3,3]", f"f32[{batch},3,2]", attrs), [aa, bb]))
    results = run_many_on_xla([XlaJob("run", text, x) for text, x in cases])
    for (text, x), want in zip(cases, results):
        assert isinstance(want, list), want
        (got,) = evaluate_module(parse_module(text), x, 1)
        np.testing.assert_allclose(got, want[0], rtol=2e-6, atol=1e-6, equal_nan=True,
                                   err_msg=text)
