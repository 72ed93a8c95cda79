"""Activation functions against independent references (math / scipy), float32 tolerance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tilecc.bir.enums import ActivationFunctionType as Act
from tilecc.errors import SimError
from tilecc.sim.activation import ACTIVATION_TABLE, apply_activation, erf

X = np.concatenate([np.linspace(-6, 6, 241), [0.0, -0.0, 1e-6, -1e-6]]).astype(np.float32)
X64 = X.astype(np.float64)
PHI = 0.5 * (1 + np.vectorize(math.erf)(X64 / math.sqrt(2)))


def sig(x):
    return 1 / (1 + np.exp(-x))


REFERENCE = {
    Act.Identity: X64, Act.Copy: X64, Act.Square: X64 ** 2, Act.Relu: np.maximum(X64, 0),
    Act.Sigmoid: sig(X64), Act.Tanh: np.tanh(X64), Act.Exp: np.exp(X64),
    Act.Softplus: np.log1p(np.exp(X64)), Act.Erf: np.vectorize(math.erf)(X64),
    Act.Sin: np.sin(X64), Act.Arctan: np.arctan(X64), Act.Sign: np.sign(X64),
    Act.Gelu: X64 * PHI, Act.Mish: X64 * np.tanh(np.log1p(np.exp(X64))),
    Act.Gelu_apprx_tanh: 0.5 * X64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (X64 + 0.044715 * X64 ** 3))),
    Act.Gelu_apprx_sigmoid: X64 * sig(1.702 * X64),
    Act.Derivative_Gelu_apprx_sigmoid: sig(1.702 * X64) * (1 + 1.702 * X64 * (1 - sig(1.702 * X64))),
    Act.Derivative_Gelu: PHI + X64 * np.exp(-X64 ** 2 / 2) / math.sqrt(2 * math.pi),
    Act.Derivative_Erf: 2 / math.sqrt(math.pi) * np.exp(-X64 ** 2),
    Act.Abs: np.abs(X64), Act.Silu: X64 * sig(X64),
    Act.Derivative_silu: sig(X64) * (1 + X64 * (1 - sig(X64))),
    Act.Is_finite: np.ones_like(X64),
}


@pytest.mark.parametrize("func", sorted(REFERENCE, key=int), ids=lambda f: f.name)
def test_function_matches_reference(func):
    got = apply_activation(func, X)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, REFERENCE[func], rtol=2e-6, atol=3e-7)


def test_positive_domain_functions():
    x = np.array([0.25, 1.0, 4.0, 1e6], np.float32)
    np.testing.assert_allclose(apply_activation(Act.Sqrt, x), np.sqrt(x), rtol=1e-7)
    np.testing.assert_allclose(apply_activation(Act.Rsqrt, x), 1 / np.sqrt(x.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(apply_activation(Act.Ln, x), np.log(x.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(apply_activation(Act.Reciprocal, x), 1 / x.astype(np.float64), rtol=1e-7)
    np.testing.assert_allclose(apply_activation(Act.Abs_reciprocal_sqrt, -x), 1 / np.sqrt(x.astype(np.float64)), rtol=1e-6)


def test_specials():
    x = np.array([np.nan, np.inf, -np.inf, 0.0], np.float32)
    np.testing.assert_array_equal(apply_activation(Act.Is_finite, x), [0, 0, 0, 1])
    np.testing.assert_array_equal(apply_activation(Act.Exp, x), [np.nan, np.inf, 0.0, 1.0])
    np.testing.assert_array_equal(apply_activation(Act.Reciprocal, x), [np.nan, 0.0, -0.0, np.inf])
    np.testing.assert_array_equal(erf(np.array([np.inf, -np.inf, 0.0])), [1.0, -1.0, 0.0])
    np.testing.assert_array_equal(apply_activation(Act.Lrelu, np.array([-2.0, 3.0], np.float32), 0.1),
                                  np.array([-0.2, 3.0], np.float32))


def test_every_function_but_unknown_is_implemented():
    assert set(ACTIVATION_TABLE) == set(Act) - {Act.Unknown}
    with pytest.raises(SimError, match="Unknown is not implemented"):
        apply_activation(Act.Unknown, X)
