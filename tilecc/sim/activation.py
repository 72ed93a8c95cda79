"""Activation functions of the simulated Activation engine: BIR ActivationFunctionType -> numpy.

Contract: each function maps float32 to float32 (computed in float32; the real engine
approximates them with piece-wise polynomials, nki.api.shared "Supported Activation
Functions", so results are checked against references with a tolerance, not bit for bit).
`alpha` is the slope of the parametric functions (Lrelu, Prelu). Definitions:
gelu(x) = x * Phi(x); gelu_apprx_tanh(x) = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)));
gelu_apprx_sigmoid(x) = x * sigmoid(1.702 x) and its derivative; Derivative_Erf(x) =
2/sqrt(pi) exp(-x^2); Derivative_Gelu = Phi(x) + x phi(x); Derivative_silu =
s(x) (1 + x (1 - s(x))); Sign(0) = 0; Is_finite gives 1.0 / 0.0; Abs_reciprocal_sqrt =
1/sqrt(|x|). `Unknown` (and any member without an entry) raises SimError naming it.

erf is evaluated with the Abramowitz-Stegun 7.1.26 rational form in float64 (|error| <=
1.5e-7, below float32 resolution of erf's range), since numpy has no erf.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Union

import numpy as np

from tilecc.bir.enums import ActivationFunctionType as Act
from tilecc.errors import SimError

F32 = np.float32
F32_DTYPE = np.dtype(F32)
# a unary numpy ufunc, or fn(x, alpha) for the functions built from several steps
ActFn = Union[np.ufunc, Callable[[np.ndarray, np.ndarray], np.ndarray]]

_SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def erf(x: np.ndarray) -> np.ndarray:
    """erf in float64 (Abramowitz & Stegun 7.1.26), NaN and +-inf handled."""
    x64 = np.asarray(x, np.float64)
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x64))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741
                                                          + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x64) * (1.0 - poly * np.exp(-x64 * x64))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return F32(1.0) / (F32(1.0) + np.exp(-x))


def _phi_cdf(x: np.ndarray) -> np.ndarray:
    return (0.5 * (1.0 + erf(np.asarray(x, np.float64) / np.sqrt(2.0)))).astype(F32)


def _gelu_apprx_tanh(x: np.ndarray) -> np.ndarray:
    inner = F32(_SQRT_2_OVER_PI) * (x + F32(0.044715) * x * x * x)
    return F32(0.5) * x * (F32(1.0) + np.tanh(inner))


def _gelu_sigmoid_dx(x: np.ndarray) -> np.ndarray:
    # float64 inside: 1.702 * x overflows float32 for |x| > 2e38 (then inf * 0 = NaN)
    z = 1.702 * np.asarray(x, np.float64)
    s = 1.0 / (1.0 + np.exp(-z))
    return (s + z * s * (1.0 - s)).astype(F32)


def _silu_dx(x: np.ndarray) -> np.ndarray:
    s = _sigmoid(x)
    return s * (F32(1.0) + x * (F32(1.0) - s))


ACTIVATION_TABLE: dict[Act, ActFn] = {
    Act.Identity: lambda x, a: x,
    Act.Copy: lambda x, a: x,
    Act.Square: lambda x, a: x * x,
    Act.Relu: lambda x, a: np.maximum(x, F32(0.0)),
    Act.Lrelu: lambda x, a: np.where(x >= 0, x, x * a),
    Act.Prelu: lambda x, a: np.where(x >= 0, x, x * a),
    Act.Sigmoid: lambda x, a: _sigmoid(x),
    Act.Tanh: np.tanh,
    Act.Exp: np.exp,
    Act.Softplus: lambda x, a: np.logaddexp(F32(0.0), x),
    Act.Sqrt: np.sqrt,
    Act.Rsqrt: lambda x, a: F32(1.0) / np.sqrt(x),
    Act.Ln: np.log,
    Act.Erf: lambda x, a: erf(x).astype(F32),
    Act.Sin: np.sin,
    Act.Arctan: np.arctan,
    Act.Sign: np.sign,
    Act.Gelu: lambda x, a: x * _phi_cdf(x),
    Act.Mish: lambda x, a: x * np.tanh(np.logaddexp(F32(0.0), x)),
    Act.Gelu_apprx_tanh: lambda x, a: _gelu_apprx_tanh(x),
    Act.Gelu_apprx_sigmoid: lambda x, a: x * _sigmoid(F32(1.702) * x),
    Act.Derivative_Gelu_apprx_sigmoid: lambda x, a: _gelu_sigmoid_dx(x),
    Act.Derivative_Gelu: lambda x, a: _phi_cdf(x) + x * (
        F32(_INV_SQRT_2PI) * np.exp(F32(-0.5) * x * x)),
    Act.Derivative_Erf: lambda x, a: F32(2.0 / np.sqrt(np.pi)) * np.exp(-x * x),
    Act.Abs: np.abs,
    Act.Reciprocal: lambda x, a: F32(1.0) / x,
    Act.Abs_reciprocal_sqrt: lambda x, a: F32(1.0) / np.sqrt(np.abs(x)),
    Act.Silu: lambda x, a: x * _sigmoid(x),
    Act.Derivative_silu: lambda x, a: _silu_dx(x),
    Act.Is_finite: lambda x, a: np.isfinite(x).astype(F32),
}


def apply_activation(func: Act, x: np.ndarray, alpha: np.ndarray | float = 0.0,
                     out: np.ndarray | None = None) -> np.ndarray:
    """func(x) in float32 (alpha: scalar or broadcastable per-partition slope); SimError
    for a function the engine model does not have. With `out` (a float32 array of x's
    shape) a single-ufunc function writes there directly; the result is returned either way."""
    if (fn := ACTIVATION_TABLE.get(func)) is None:
        raise SimError(f"activation function {func.name} is not implemented by the simulator")
    if isinstance(fn, np.ufunc):
        if out is not None and out.dtype is F32_DTYPE and out.shape == x.shape:
            return fn(x, out=out)
        return np.asarray(fn(x), dtype=F32)
    return np.asarray(fn(x, np.asarray(alpha, F32)), dtype=F32)
