"""Complex (c64 / c128) elementwise HLO semantics on numpy arrays, as XLA CPU computes them.

Contract: every function takes numpy complex64 / complex128 arrays (operands of one op
share a dtype and shape) and returns a new array: complex of the same width, or the
component float type for abs. Callers run them under `np.errstate(all="ignore")`.

XLA CPU lowers each complex op to float arithmetic on the real and imaginary parts
(xla/service/elemental_ir_emitter.cc), so the rules below are those formulas, evaluated on
the parts with XLA CPU's denormals-are-zero / flush-to-zero (a subnormal part of an operand
or of a result is a signed zero). Measured against XLA CPU on jaxlib 0.10.2:
- add / subtract / multiply are bit-exact, special values included: multiply is
  (ac - bd) + (ad + bc)i contracted into fused multiply-adds, re = fma(a, c, -(bd)),
  im = fma(b, c, ad), with no C99 recovery of infinities ((inf + 0i) * 1e-40i is nan + nan i
  where numpy gives nan + inf i). negate flips the signs and keeps subnormal parts.
- divide is Smith's algorithm with XLA's fix-ups when it yields nan + nan i (zero
  denominator -> copysign(inf, re b) * a; infinite numerator over a finite denominator;
  finite numerator over an infinite denominator -> signed zeros): bit-exact but for the
  last-bit rounding of Smith's intermediate quotients (within 2 ulp).
- abs is max * sqrt(fma(r, r, 1)), r = min / max, with NaN-propagating max / min, and `min`
  where that is NaN (0 + 0i, inf + inf i): abs(nan + inf i) is nan (numpy: inf), bit-exact.
  sign is z / abs(z), and z itself (unflushed) where abs(z) is 0.
- compare EQ / NE compares both parts (ordered ==, unordered !=); the other directions
  are not defined for complex values.
- exp, log, sqrt, rsqrt, power, tanh, sin, cos follow XLA's formulas (e^a (cos b + i sin b);
  log|z| + i atan2(b, a); the algebraic sqrt (see _sqrt: sqrt(-1 - 0i) is +i); the polar
  rsqrt and power; tanh through expm1; sin / cos through e^b) with its special-value
  selects, which agree with XLA CPU at every inf / NaN / zero part tested. XLA evaluates
  exp / log / sin / cos / atan2 / pow with its own polynomial approximations, so finite
  results agree to a few ulp, not bit for bit, and further apart where the formula
  cancels: log near |z| = 1 (log|z| of a rounded |z|), sin with a tiny imaginary part
  (e^b - e^-b), power with a large exponent (|c ln|z|| magnifies the error), and
  subnormal parts reaching atan2 (XLA's f64 atan2 takes the sign of a flushed y / x).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import PrimitiveType, primitive_type_name

Array = np.ndarray
Parts = tuple[Array, Array]


def _flush(x: Array) -> Array:
    tiny = np.finfo(x.dtype).tiny
    small = np.abs(x) < tiny
    if not np.count_nonzero(small):
        return x
    return np.where(small, np.copysign(np.zeros((), x.dtype), x), x)


def split(z: Array) -> Parts:
    """(real, imag) of z, subnormal parts flushed (XLA CPU's denormals-are-zero)."""
    return _flush(np.real(z).copy()), _flush(np.imag(z).copy())


def compose(re: Array, im: Array, dtype: np.dtype) -> Array:
    """re + im i as `dtype`, subnormal parts flushed (XLA CPU's flush-to-zero)."""
    out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), dtype)
    out.real = _flush(np.asarray(re, out.real.dtype))
    out.imag = _flush(np.asarray(im, out.real.dtype))
    return out


def compose_exact(re: Array, im: Array, dtype: np.dtype) -> Array:
    """re + im i as `dtype` with the parts rounded to its width but not flushed (complex(),
    convert: XLA moves or casts the parts, no arithmetic)."""
    out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), dtype)
    out.real = re
    out.imag = im
    return out


def _abs_parts(a: Array, b: Array) -> tuple[Array, Array, Array]:
    """(min, max, sqrt(1 + (min/max)^2)) of |a|, |b| with NaN-propagating max / min."""
    abs_a, abs_b = np.abs(a), np.abs(b)
    high, low = np.maximum(abs_a, abs_b), np.minimum(abs_a, abs_b)
    ratio = low / high
    return low, high, np.sqrt(fused_multiply_add(ratio, ratio, np.ones((), ratio.dtype)))


def _abs(a: Array, b: Array) -> Array:
    low, high, root = _abs_parts(a, b)
    result = high * root
    return np.where(np.isnan(result), low, result)


def complex_abs(z: Array) -> Array:
    return _flush(_abs(*split(z)))


def fused_multiply_add(x: Array, y: Array, z: Array) -> Array:
    """x * y + z rounded once, the fused multiply-add XLA CPU contracts a multiply and an
    add into (here, in rng_steps and in batch_norm), on f32 / f64 arrays: exactly through
    f64 for f32; for f64 through Dekker's error-free product and sum (correct but for rare
    double roundings)."""
    if x.dtype == np.float32:
        return (x.astype(np.float64) * y + z).astype(np.float32)
    product = x * y
    split = 134217729.0  # 2^27 + 1, Veltkamp's splitter for 53-bit mantissas
    xs, ys = x * split, y * split
    x_hi, y_hi = xs - (xs - x), ys - (ys - y)
    x_lo, y_lo = x - x_hi, y - y_hi
    product_error = ((x_hi * y_hi - product) + x_hi * y_lo + x_lo * y_hi) + x_lo * y_lo
    total = product + z
    virtual = total - product
    sum_error = (product - (total - virtual)) + (z - virtual)
    fused = total + (sum_error + product_error)
    return np.where(np.isfinite(fused), fused, total)


def _multiply(a: Array, b: Array, c: Array, d: Array) -> Parts:
    """XLA CPU contracts the textbook product into fused multiply-adds (measured):
    re = fma(a, c, -(b d)), im = fma(b, c, a d)."""
    return fused_multiply_add(a, c, -(b * d)), fused_multiply_add(b, c, a * d)


def _divide(ar: Array, ai: Array, br: Array, bi: Array) -> Parts:
    r_over_i = br / bi
    r_over_i_denom = bi + r_over_i * br
    i_over_r = bi / br
    i_over_r_denom = br + i_over_r * bi
    r_lt_i = np.abs(br) < np.abs(bi)
    cr = np.where(r_lt_i, (r_over_i * ar + ai) / r_over_i_denom,
                  (i_over_r * ai + ar) / i_over_r_denom)
    ci = np.where(r_lt_i, (r_over_i * ai - ar) / r_over_i_denom,
                  (ai - i_over_r * ar) / i_over_r_denom)
    inf = np.inf
    one, zero = np.ones((), ar.dtype), np.zeros((), ar.dtype)
    zero_denominator = (br == 0) & (bi == 0) & (~np.isnan(ar) | ~np.isnan(ai))
    inf_b = np.copysign(inf, br).astype(ar.dtype)
    b_finite = np.isfinite(br) & np.isfinite(bi)
    a_r_inf, a_i_inf = np.isinf(ar), np.isinf(ai)
    inf_num = (a_r_inf | a_i_inf) & b_finite
    ar_s = np.copysign(np.where(a_r_inf, one, zero), ar)
    ai_s = np.copysign(np.where(a_i_inf, one, zero), ai)
    b_r_inf, b_i_inf = np.isinf(br), np.isinf(bi)
    inf_den = (b_r_inf | b_i_inf) & np.isfinite(ar) & np.isfinite(ai)
    br_s = np.copysign(np.where(b_r_inf, one, zero), br)
    bi_s = np.copysign(np.where(b_i_inf, one, zero), bi)
    both_nan = np.isnan(cr) & np.isnan(ci)
    fixed_r = np.where(zero_denominator, inf_b * ar,
                       np.where(inf_num, inf * (ar_s * br + ai_s * bi),
                                np.where(inf_den, 0 * (ar * br_s + ai * bi_s), cr)))
    fixed_i = np.where(zero_denominator, inf_b * ai,
                       np.where(inf_num, inf * (ai_s * br - ar_s * bi),
                                np.where(inf_den, 0 * (ai * br_s - ar * bi_s), ci)))
    return np.where(both_nan, fixed_r, cr), np.where(both_nan, fixed_i, ci)


def _power(a: Array, b: Array, c: Array, d: Array) -> Parts:
    """(a+bi)^(c+di) = |z|^c e^(-d arg z) (cos q + i sin q), q = c arg z + d ln|z|;
    0^(c+0i) is 1 for c == 0 and 0 for c > 0 (Kahan's convention, as XLA)."""
    norm_sq = a * a + b * b
    angle = np.arctan2(b, a)
    coeff = np.power(norm_sq, 0.5 * c) * np.exp(-d * angle)
    q = c * angle + 0.5 * d * np.log(norm_sq)
    at_zero = (norm_sq == 0) & (d == 0) & (c >= 0)
    zero = np.zeros((), a.dtype)
    # z^0 and 1^w are 1 whatever the other operand, NaN and inf included (XLA CPU, measured)
    one = ((c == 0) & (d == 0)) | ((a == 1) & (b == 0))
    return (np.where(one, 1, np.where(at_zero, np.where(c == 0, 1, zero), coeff * np.cos(q))),
            np.where(one | at_zero, zero, coeff * np.sin(q)))


def _exp(a: Array, b: Array) -> Parts:
    """e^a (cos b + i sin b); a zero b gives e^a + 0i (XLA CPU, measured: exp(inf + 0i) is
    inf + 0i, not inf + nan i)."""
    e = np.exp(a)
    return np.where(b == 0, e, e * np.cos(b)), np.where(b == 0, 0, e * np.sin(b))


def _log(a: Array, b: Array) -> Parts:
    return np.log(_abs(a, b)), np.arctan2(b, a)


def _sqrt(a: Array, b: Array) -> Parts:
    """The algebraic form (measured on XLA CPU; not the polar form rsqrt still uses):
    t = sqrt((|a| + |z|) / 2), (t, b / 2t) for a >= 0, else (|b| / 2t, +-t) with -t only
    for b < 0, so sqrt(-1 - 0i) is +i; 0 at 0, (inf, b) for an infinite b, (0, +-inf)
    at a = -inf, nan + nan i when a part is NaN."""
    norm = _abs(a, b)
    t = np.sqrt((np.abs(a) + norm) * 0.5)
    non_negative = a >= 0
    re = np.where(non_negative, t, np.abs(b) / (2 * t))
    im = np.where(non_negative, b / (2 * t), np.where(b < 0, -t, t))
    inf, zero = np.inf, np.zeros((), a.dtype)
    b_inf = np.abs(b) == inf
    re = np.where(b_inf | (a == inf), inf, np.where(a == -inf, zero, re))
    im = np.where(b_inf, b, np.where(a == -inf, np.where(b < 0, -inf, inf), im))
    at_zero = norm == 0
    nan = np.isnan(a) | np.isnan(b)
    return (np.where(nan, np.nan, np.where(at_zero, zero, re)),
            np.where(nan, np.nan, np.where(at_zero, zero, im)))


def _rsqrt(a: Array, b: Array) -> Parts:
    low, high, root = _abs_parts(a, b)
    r = 1 / np.sqrt(high) / np.sqrt(root)
    r = np.where(np.isnan(r), 1 / np.sqrt(low), r)
    angle = -0.5 * np.arctan2(b, a)
    re, im = r * np.cos(angle), r * np.sin(angle)
    zero = np.zeros((), a.dtype)
    zero_zero = (a == 0) & (b == 0)
    edge = (np.isinf(b) & np.isnan(a)) | np.isinf(a)
    re = np.where(zero_zero, np.inf, np.where(edge, np.copysign(zero, a), re))
    im = np.where(zero_zero, np.nan, np.where(edge, -np.copysign(zero, b), im))
    return re, im


def _sin(a: Array, b: Array) -> Parts:
    """sin a (e^b + e^-b) / 2 + i cos a (e^b - e^-b) / 2, XLA's formula: for small b the
    imaginary part cancels, and XLA's exp approximation then shows (up to ~1e-5 relative).
    A subnormal e^b is flushed to zero, so e^-b is inf (sin(i * -88) is nan - inf i in c64)."""
    e = _flush(np.exp(b))
    half, half_inv = 0.5 * e, 0.5 / e
    return np.sin(a) * (half + half_inv), np.cos(a) * (half - half_inv)


def _cos(a: Array, b: Array) -> Parts:
    e = _flush(np.exp(b))
    half, half_inv = 0.5 * e, 0.5 / e
    return np.cos(a) * (half_inv + half), np.sin(a) * (half_inv - half)


def _tanh(a: Array, b: Array) -> Parts:
    """(e^2a - e^-2a + 2 sin(2b) i) / (e^2a + e^-2a + 2 cos(2b)) through expm1, with XLA's
    limits: real -> sign(a) when the denominator overflows, NaN / zero fix-ups."""
    up, down = np.expm1(2 * a), np.expm1(-2 * a)
    cos_b, sin_b = np.cos(b), np.sin(b)
    imag_numerator = 4 * (cos_b * sin_b)
    a_sq = a * a
    sum_m2 = np.where(a_sq < 1e-8, a_sq, up + down)
    denom = sum_m2 + 4 * (cos_b * cos_b)
    re = np.where(sum_m2 == np.inf, np.copysign(1, a), (up - down) / denom)
    im = imag_numerator / denom
    sin_nan = np.isnan(imag_numerator)
    a_inf = np.isinf(a)
    re = np.where(sin_nan & ~a_inf, np.nan, re)
    im = np.where((b == 0) | (a_inf & sin_nan), 0, im)
    return re, im


def complex_sign(z: Array) -> Array:
    """z / |z|; z itself, unflushed, where |z| is 0 (XLA CPU, measured: sign(-0 + 1e-40i)
    keeps both parts)."""
    a, b = split(z)
    norm = _abs(a, b)
    return np.where(norm == 0, z, compose(a / norm, b / norm, z.dtype))


_UNARY: dict[Op, Callable[[Array, Array], Parts]] = {
    Op.EXP: _exp, Op.LOG: _log, Op.SQRT: _sqrt,
    Op.RSQRT: _rsqrt, Op.TANH: _tanh, Op.SIN: _sin, Op.COS: _cos,
}
_BINARY: dict[Op, Callable[[Array, Array, Array, Array], Parts]] = {
    Op.ADD: lambda a, b, c, d: (a + c, b + d), Op.SUBTRACT: lambda a, b, c, d: (a - c, b - d),
    Op.MULTIPLY: _multiply, Op.DIVIDE: _divide, Op.POWER: _power,
}


def complex_unary_op(opcode: Op, t: PrimitiveType) -> Callable[[Array], Array]:
    """The unary op on complex values (abs gives the component type); InterpError otherwise."""
    if opcode in (Op.COPY, Op.OPTIMIZATION_BARRIER):
        return lambda z: z
    if opcode is Op.ABS:
        return complex_abs
    if opcode is Op.SIGN:
        return complex_sign
    if opcode is Op.NEGATE:  # a sign flip of each part: subnormals are kept
        return np.negative
    fn = _UNARY.get(opcode)
    if fn is None:
        raise InterpError(f"{opcode.mnemonic} on {primitive_type_name(t)} is not supported "
                          "by the interpreter")
    op = fn
    return lambda z: compose(*op(*split(z)), z.dtype)


def complex_binary_op(opcode: Op, t: PrimitiveType) -> Callable[[Array, Array], Array]:
    """The binary op on complex operands; InterpError otherwise."""
    fn = _BINARY.get(opcode)
    if fn is None:
        raise InterpError(f"{opcode.mnemonic} on {primitive_type_name(t)} is not supported "
                          "by the interpreter")
    op = fn
    return lambda x, y: compose(*op(*split(x), *split(y)), x.dtype)


def complex_compare(direction: str, x: Array, y: Array) -> Array:
    """EQ: both parts equal (ordered); NE: either part unequal (unordered, NaN != NaN)."""
    (a, b), (c, d) = split(x), split(y)
    if direction == "EQ":
        return (a == c) & (b == d)
    if direction == "NE":
        return (a != c) | (b != d)
    raise InterpError(f"compare direction {direction} is not defined for complex values "
                      "(only EQ / NE)")
