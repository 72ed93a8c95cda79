"""The interpreter's fft (FFT, IFFT, RFFT, IRFFT over the last len(fft_length) dimensions):
hand-computed transforms, XLA's shape rules in the verifier, refusals, and XLA CPU on random
values of every type and rank, corner values and zero-sized dimensions."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.errors import InterpError, VerifyError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.verifier import verify_module

RTOL, ATOL = 2e-6, 1e-6  # the oracle tests' bound


def fft(t_in: str, t_out: str, fft_type: str, lengths: str) -> str:
    return (f"HloModule m\nENTRY e {{\n  x = {t_in} parameter(0)\n  ROOT f = {t_out} fft(x), "
            f"fft_type={fft_type}, fft_length={{{lengths}}}\n}}\n")


def run(text: str, x: np.ndarray) -> np.ndarray:
    module = parse_module(text)
    verify_module(module)
    (out,) = evaluate_module(module, [x[None]], 1)
    return out[0]


GOLDEN = [  # (operand type, result type, fft_type, fft_length, input, output): by hand
    ("c64[4]", "c64[4]", "FFT", "4", [1, 2, 3, 4], [10, -2 + 2j, -2, -2 - 2j]),
    ("c64[4]", "c64[4]", "IFFT", "4", [10, -2 + 2j, -2, -2 - 2j], [1, 2, 3, 4]),
    ("c64[2]", "c64[2]", "FFT", "2", [1j, 1], [1 + 1j, -1 + 1j]),
    ("f32[4]", "c64[3]", "RFFT", "4", [1, 2, 3, 4], [10, -2 + 2j, -2]),
    ("f32[3]", "c64[2]", "RFFT", "3", [1, 2, 3], [6, -1.5 + 0.75 ** 0.5 * 1j]),
    ("c64[3]", "f32[4]", "IRFFT", "4", [10, -2 + 2j, -2], [1, 2, 3, 4]),
    ("c64[2]", "f32[3]", "IRFFT", "3", [6, -1.5 + 0.75 ** 0.5 * 1j], [1, 2, 3]),
    # the imaginary parts of the zero and n/2 terms are not read
    ("c64[3]", "f32[4]", "IRFFT", "4", [10 + 5j, -2 + 2j, -2 + 7j], [1, 2, 3, 4]),
    ("c64[2,2]", "c64[2,2]", "FFT", "2,2", [[1, 2], [3, 4]], [[10, -2], [-4, 0]]),
    # IFFT of two dimensions divides by the product of the lengths
    ("c64[2,2]", "c64[2,2]", "IFFT", "2,2", [[10, -2], [-4, 0]], [[1, 2], [3, 4]]),
    ("f32[2,2]", "c64[2,2]", "RFFT", "2,2", [[1, 2], [3, 4]], [[10, -2], [-4, 0]]),
    ("c64[2,2]", "f32[2,2]", "IRFFT", "2,2", [[10, -2], [-4, 0]], [[1, 2], [3, 4]]),
    # one dimension of a batch: each row on its own
    ("c64[2,2]", "c64[2,2]", "FFT", "2", [[1, 2], [3, 4]], [[3, -1], [7, -1]]),
    ("c128[2,1,2]", "c128[2,1,2]", "FFT", "1,2", [[[1, 2]], [[0, 1j]]], [[[3, -1]], [[1j, -1j]]]),
    ("f64[1]", "c128[1]", "RFFT", "1", [5], [5]),
]
TYPES = {"c64": np.complex64, "c128": np.complex128, "f32": np.float32, "f64": np.float64}


@pytest.mark.parametrize("t_in, t_out, fft_type, lengths, x, want", GOLDEN)
def test_fft_by_hand(t_in: str, t_out: str, fft_type: str, lengths: str, x: list,
                     want: list) -> None:
    got = run(fft(t_in, t_out, fft_type, lengths), np.array(x, TYPES[t_in[:t_in.index("[")]]))
    assert got.dtype == TYPES[t_out[:t_out.index("[")]]
    np.testing.assert_allclose(got, np.array(want), rtol=RTOL, atol=ATOL)


def test_empty_transform_gives_an_empty_result() -> None:
    assert run(fft("c64[3,0]", "c64[3,0]", "FFT", "0"), np.zeros((3, 0), np.complex64)).shape \
        == (3, 0)
    assert run(fft("f32[0,4]", "c64[0,3]", "RFFT", "4"), np.zeros((0, 4), np.float32)).shape \
        == (0, 3)
    assert run(fft("c64[2,0]", "f32[2,0]", "IRFFT", "0"), np.zeros((2, 0), np.complex64)).shape \
        == (2, 0)


def test_nan_spreads_to_every_term() -> None:
    got = run(fft("c64[4]", "c64[4]", "FFT", "4"), np.array([1, np.nan, 0, 0], np.complex64))
    assert np.isnan(got).all()


SHAPE_ERRORS = [  # (operand, result, fft_type, fft_length, XLA's complaint)
    ("f32[8]", "f32[8]", "FFT", "8", r"FFT takes a complex operand, got f32\[8\]"),
    ("c64[8]", "c64[5]", "RFFT", "8", r"RFFT takes an f32 or f64 operand, got c64\[8\]"),
    ("f32[8]", "c64[8]", "RFFT", "8", r"shape is c64\[8\]\S*, expected c64\[5\]"),
    ("f32[6]", "c64[4]", "RFFT", "8", r"RFFT of fft_length \{8\} needs those last dimensions"),
    ("c64[4]", "f32[8]", "IRFFT", "8", r"IRFFT of fft_length \{8\} needs last dimensions \{5\}"),
    ("c64[2,2,2,2]", "c64[2,2,2,2]", "FFT", "2,2,2,2", r"fft_length names 1 to 3 dimensions"),
    ("c64[2]", "c64[2]", "FFT", "2,2", r"an fft of rank 2 needs an operand of at least"),
    ("c64[2]", "c64[2]", "DCT", "2", r"fft_type=DCT must be one of FFT, IFFT, RFFT, IRFFT"),
]


@pytest.mark.parametrize("t_in, t_out, fft_type, lengths, message", SHAPE_ERRORS)
def test_verifier_refuses_what_xla_shape_inference_refuses(t_in: str, t_out: str,
                                                           fft_type: str, lengths: str,
                                                           message: str) -> None:
    module = parse_module(fft(t_in, t_out, fft_type, lengths))
    with pytest.raises(VerifyError, match=r"^e/f \(fft\): " + message):
        verify_module(module)
    with pytest.raises(InterpError, match=r"^f \(fft\): " + message):
        evaluate_module(module, random_inputs(module, 1, 0), 1)


def test_fft_length_other_than_the_dimensions_is_refused() -> None:
    # XLA's verifier accepts it; XLA CPU fills part of the result and leaves the rest
    module = parse_module(fft("c64[8]", "c64[8]", "FFT", "4"))
    verify_module(module)
    with pytest.raises(InterpError, match=r"f \(fft\): fft_length \{4\} is not the transformed "
                                          r"dimensions of c64\[8\]"):
        evaluate_module(module, [np.zeros((1, 8), np.complex64)], 1)


def _complex(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)


ORACLE_CASES = [  # (operand, result, fft_type, fft_length)
    ("c64[8,32]", "c64[8,32]", "FFT", "32"), ("c64[8,30]", "c64[8,30]", "IFFT", "30"),
    ("c64[5,8,32]", "c64[5,8,32]", "IFFT", "8,32"), ("c64[3,6,10]", "c64[3,6,10]", "FFT", "6,10"),
    ("c64[2,4,6,10]", "c64[2,4,6,10]", "FFT", "4,6,10"), ("c64[97]", "c64[97]", "FFT", "97"),
    ("f32[5,16]", "c64[5,9]", "RFFT", "16"), ("f32[4,6,7]", "c64[4,6,4]", "RFFT", "6,7"),
    ("f32[2,3,4,6]", "c64[2,3,4,4]", "RFFT", "3,4,6"),
    ("c64[5,9]", "f32[5,16]", "IRFFT", "16"), ("c64[4,6,4]", "f32[4,6,7]", "IRFFT", "6,7"),
    ("c64[2,4,6,3]", "f32[2,4,6,5]", "IRFFT", "4,6,5"),
    ("c128[3,20]", "c128[3,20]", "FFT", "20"), ("c128[3,4,5]", "c128[3,4,5]", "IFFT", "4,5"),
    ("f64[3,12]", "c128[3,7]", "RFFT", "12"), ("c128[3,7]", "f64[3,12]", "IRFFT", "12"),
    ("c64[0,4]", "c64[0,4]", "FFT", "4"), ("f32[3,0]", "c64[3,0]", "RFFT", "0"),
    ("c64[3,0]", "f32[3,0]", "IRFFT", "0"), ("f32[3,1]", "c64[3,1]", "RFFT", "1"),
]


def _oracle_input(rng: np.random.Generator, t_in: str) -> np.ndarray:
    name, dims = t_in[:t_in.index("[")], t_in[t_in.index("[") + 1:-1]
    shape = (1,) + tuple(int(d) for d in dims.split(","))
    if name.startswith("c"):
        return _complex(rng, shape, TYPES[name])
    return rng.uniform(-1, 1, shape).astype(TYPES[name])


@pytest.mark.oracle
def test_fft_equals_xla_on_random_values() -> None:
    pytest.importorskip("jax")
    from tilecc.hlo.xla import XlaJob, run_many_on_xla
    rng = np.random.default_rng(11)
    cases = [(fft(*case), [_oracle_input(rng, case[0])]) for case in ORACLE_CASES]
    results = run_many_on_xla([XlaJob("run", text, x) for text, x in cases])
    for (text, x), want in zip(cases, results):
        assert isinstance(want, list), want
        got = evaluate_module(parse_module(text), x, 1)[0]
        assert got.dtype == want[0].dtype and got.shape == want[0].shape, text
        # c128 / f64: ducc in double, bit for bit; c64 / f32: within XLA's own rounding
        if got.dtype in (np.complex128, np.float64):
            np.testing.assert_array_equal(got, want[0], err_msg=text)
        else:
            np.testing.assert_allclose(got, want[0], rtol=RTOL, atol=ATOL, err_msg=text)


@pytest.mark.oracle
def test_fft_of_nan_and_inf_equals_xla() -> None:
    pytest.importorskip("jax")
    from tilecc.hlo.xla import XlaJob, run_many_on_xla
    rows = np.array([[1, 2, np.nan, 4, 5, 6, 7, 8], [1, 2, np.inf, 4, 5, 6, 7, 8],
                     [1, 2, -np.inf, 4, 5, 6, 7, 8], [0, 0, 0, 0, 0, 0, 0, 0]])
    z, r = rows.astype(np.complex64)[None], rows.astype(np.float32)[None]
    cases = [(fft("c64[4,8]", "c64[4,8]", "FFT", "8"), z),
             (fft("c64[4,8]", "c64[4,8]", "IFFT", "8"), z),
             (fft("f32[4,8]", "c64[4,5]", "RFFT", "8"), r),
             (fft("c64[4,5]", "f32[4,8]", "IRFFT", "8"), z[:, :, :5])]
    results = run_many_on_xla([XlaJob("run", text, [x]) for text, x in cases])
    for (text, x), want in zip(cases, results):
        assert isinstance(want, list), want
        got = evaluate_module(parse_module(text), [x], 1)[0]
        np.testing.assert_allclose(got, want[0], rtol=RTOL, atol=ATOL, equal_nan=True,
                                   err_msg=text)
