"""Elementwise HLO semantics on numpy arrays, exactly as XLA defines them.

Contract: every function takes numpy arrays of the operand dtype (already broadcast to a
common shape by the caller; arrays may carry any leading batch axes) and returns a new
array of the result dtype. Callers run them under `np.errstate(all="ignore")`.

Integer semantics (XLA's elemental IR emitter, checked against XLA CPU in tests):
- add / subtract / multiply / negate / abs wrap around in two's complement.
- divide truncates toward zero; x / 0 is -1 for signed and all-ones for unsigned types;
  INT_MIN / -1 is INT_MIN. remainder has the dividend's sign; x % 0 is x; INT_MIN % -1 is 0.
- shift amounts are read as unsigned: an amount >= the bit width gives 0 for shift-left and
  shift-right-logical and the sign fill (0 or -1) for shift-right-arithmetic.
- power uses only the exponent's low 6 bits; an exponent negative as a signed value gives
  1 for base 1, +-1 for base -1 (all ones, also for unsigned types) and 0 otherwise.
- convert float -> integer truncates toward zero, saturates at the type's range and maps
  NaN to 0; integer -> integer keeps the low bits; anything -> pred is `x != 0`.
- the sub-byte integers (s4 / u4 / s2 / u2) run on an 8-bit carrier and keep their low bits,
  with the operand readings XLA CPU uses (interp.sub_byte).
Float semantics: f32 / f64 compute in their own precision with subnormal operands and
results flushed to signed zero (XLA CPU runs with DAZ / FTZ); f16, bf16 and the fp8 types are
widened to f32 for each op and rounded back (what XLA CPU's float normalization does).
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp import complex_math as cx
from tilecc.hlo.interp import sub_byte as sb
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import (PrimitiveType, is_complex, is_floating, is_unsigned,
                              numpy_dtype, primitive_type_name)

Array = np.ndarray
_NARROW_FLOAT_TYPES = frozenset({PrimitiveType.F16, PrimitiveType.BF16})
_SUPPORTED_INTEGERS = frozenset({
    PrimitiveType.S8, PrimitiveType.S16, PrimitiveType.S32, PrimitiveType.S64,
    PrimitiveType.U8, PrimitiveType.U16, PrimitiveType.U32, PrimitiveType.U64})


def check_supported_type(t: PrimitiveType, what: str) -> None:
    """Raise InterpError for element types the interpreter does not compute with."""
    if t == PrimitiveType.PRED or t in _SUPPORTED_INTEGERS or sb.is_sub_byte(t) or \
            is_floating(t) or is_complex(t):
        return
    raise InterpError(f"{what}: element type {primitive_type_name(t)} is not supported "
                      "by the interpreter")


def _compute_dtype(t: PrimitiveType) -> np.dtype:
    """The dtype float math runs in: f32 for the narrow floats, the type itself otherwise."""
    if is_floating(t) and t not in (PrimitiveType.F32, PrimitiveType.F64):
        return np.dtype(np.float32)
    return numpy_dtype(t)


def _float_op(fn: Callable[..., Array], flush_operands: bool = True
              ) -> Callable[..., Callable[..., Array]]:
    """Wrap a numpy float function, per element type: widen narrow floats to f32, flush
    subnormal operands (unless the op is one XLA CPU evaluates without denormals-are-zero),
    flush a subnormal result, round back to the type."""
    def resolve(t: PrimitiveType, flushed: tuple[bool, ...] = ()) -> Callable[..., Array]:
        if not is_floating(t):
            raise InterpError(f"a float operation got element type {primitive_type_name(t)}")
        wide = _compute_dtype(t)
        out = numpy_dtype(t)
        tiny = _smallest_normal(wide)
        # operand k is flushed unless the caller knows it holds no subnormal (flushed[k])
        skip = [k < len(flushed) and flushed[k] for k in range(2)]

        def apply(*args: Array, into: Array | None = None) -> Array:
            widened = [a.astype(wide, copy=False) for a in args]
            if flush_operands:
                widened = [a if known else _flush(a, tiny) for a, known in zip(widened, skip)]
            # a fresh result of the op: rounding to an identical dtype needs no copy
            result = fn(*widened) if into is None else fn(*widened, out=into)
            return _flush(np.asarray(result), tiny).astype(out, copy=False)
        return apply
    return resolve


def widen_flushed(t: PrimitiveType, x: Array) -> Array:
    """x in its compute precision with subnormals flushed (what XLA CPU compares / converts)."""
    return flush_subnormals(x.astype(_compute_dtype(t), copy=False))


_SMALLEST_NORMAL: dict[np.dtype, np.floating] = {}


def _smallest_normal(dtype: np.dtype) -> np.floating:
    tiny = _SMALLEST_NORMAL.get(dtype)
    if tiny is None:
        tiny = _SMALLEST_NORMAL[dtype] = dtype.type(np.finfo(dtype).tiny)
    return tiny


def flush_subnormals(x: Array) -> Array:
    """XLA CPU runs with denormals-are-zero and flush-to-zero: a subnormal f32 / f64 operand
    or result becomes a signed zero."""
    return _flush(x, _smallest_normal(x.dtype))


def _flush(x: Array, tiny: np.floating) -> Array:
    magnitude = np.abs(x)
    small = (magnitude < tiny) & (magnitude > 0)  # the subnormals (NaN compares false)
    if not np.count_nonzero(small):  # count_nonzero: far cheaper than .any() on small arrays
        return x
    return np.where(small, np.copysign(np.zeros((), x.dtype), x), x)


def _bits(t: PrimitiveType) -> int:
    return numpy_dtype(t).itemsize * 8


def _signed_view(x: Array) -> Array:
    return x.view(np.dtype(f"i{x.dtype.itemsize}"))


def _unsigned_view(x: Array) -> Array:
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


# ---- integer arithmetic -------------------------------------------------------------------

def _int_divide(t: PrimitiveType, a: Array, b: Array) -> Array:
    if is_unsigned(t):
        safe = np.where(b == 0, 1, b).astype(a.dtype)
        return np.where(b == 0, np.iinfo(a.dtype).max, a // safe).astype(a.dtype)
    minus_one_or_zero = (b == 0) | (b == -1)
    safe = np.where(minus_one_or_zero, 1, b).astype(a.dtype)
    remainder = np.fmod(a, safe)
    quotient = (a - remainder) // safe
    quotient = np.where(b == -1, np.negative(a), quotient)  # INT_MIN / -1 wraps to INT_MIN
    return np.where(b == 0, a.dtype.type(-1), quotient).astype(a.dtype)


def _int_remainder(t: PrimitiveType, a: Array, b: Array) -> Array:
    if is_unsigned(t):
        safe = np.where(b == 0, 1, b).astype(a.dtype)
        return np.where(b == 0, a, a % safe).astype(a.dtype)
    safe = np.where((b == 0) | (b == -1), 1, b).astype(a.dtype)
    return np.where(b == 0, a, np.fmod(a, safe)).astype(a.dtype)


def _shift_amount(t: PrimitiveType, b: Array) -> tuple[Array, Array]:
    """(amount clamped into range, mask of amounts >= the bit width read as unsigned)."""
    bits = _bits(t)
    unsigned = _unsigned_view(np.ascontiguousarray(b))
    too_big = unsigned >= bits
    return np.where(too_big, 0, unsigned).astype(b.dtype), too_big


def _shift_left(t: PrimitiveType, a: Array, b: Array) -> Array:
    amount, too_big = _shift_amount(t, b)
    return np.where(too_big, 0, np.left_shift(a, amount)).astype(a.dtype)


def _shift_right_logical(t: PrimitiveType, a: Array, b: Array) -> Array:
    amount, too_big = _shift_amount(t, b)
    ua = _unsigned_view(np.ascontiguousarray(a))
    shifted = np.right_shift(ua, _unsigned_view(np.ascontiguousarray(amount)))
    return np.where(too_big, 0, shifted).astype(ua.dtype).view(a.dtype)


def _shift_right_arithmetic(t: PrimitiveType, a: Array, b: Array) -> Array:
    amount, too_big = _shift_amount(t, b)
    sa = _signed_view(np.ascontiguousarray(a))
    shifted = np.right_shift(sa, _signed_view(np.ascontiguousarray(amount)))
    fill = np.where(sa < 0, -1, 0).astype(sa.dtype)
    return np.where(too_big, fill, shifted).astype(sa.dtype).view(a.dtype)


def _int_power(t: PrimitiveType, base: Array, exponent: Array) -> Array:
    """XLA's exponentiation by squaring: only the low 6 exponent bits count (any larger
    exponent overflows anyway); an exponent that is negative when read as signed -- for
    unsigned types too -- gives 1 for base 1, +-1 for base -1 (all ones), else 0."""
    dtype = base.dtype
    result = np.ones_like(base)
    square = np.array(base, copy=True)
    e = _unsigned_view(np.ascontiguousarray(exponent))
    for _ in range(6):
        result = np.where(e & 1, result * square, result).astype(dtype)
        square = (square * square).astype(dtype)
        e = e >> 1
    signed_exponent = _signed_view(np.ascontiguousarray(exponent))
    signed_base = _signed_view(np.ascontiguousarray(base))
    odd = (signed_exponent & 1) != 0
    at_negative = np.where(signed_base == 1, 1,
                           np.where(signed_base == -1, np.where(odd, -1, 1), 0))
    negative = signed_exponent < 0
    return np.where(negative, at_negative.astype(signed_base.dtype).view(dtype), result)


def _count_leading_zeros(t: PrimitiveType, x: Array) -> Array:
    bits = _bits(t)
    u = _unsigned_view(np.ascontiguousarray(x)).copy()
    count = np.zeros(u.shape, np.int64)
    for width in (32, 16, 8, 4, 2, 1):
        if width >= bits:
            continue
        high_empty = (u >> (bits - width)) == 0
        count += np.where(high_empty, width, 0)
        u = np.where(high_empty, u << width, u).astype(u.dtype)
    count += np.where((u >> (bits - 1)) == 0, 1, 0)
    return count.astype(x.dtype)


def _sign(t: PrimitiveType, x: Array) -> Array:
    if is_floating(t):
        wide = widen_flushed(t, x)
        out = np.where((wide == 0) | np.isnan(wide), wide, np.copysign(1.0, wide))
        return out.astype(x.dtype)
    if is_unsigned(t):
        return (x != 0).astype(x.dtype)
    return np.sign(x).astype(x.dtype)


def _round_half_away(x: Array) -> Array:
    truncated = np.trunc(x)
    return np.where(np.abs(x - truncated) >= 0.5, truncated + np.sign(x), truncated)


_ERF = np.frompyfunc(math.erf, 1, 1)


def _erf(x: Array) -> Array:
    """erf correctly rounded from f64 (XLA CPU's f32 polynomial is within an ulp of it)."""
    return np.asarray(_ERF(x.astype(np.float64)), dtype=np.float64).astype(x.dtype)


def _logistic(x: Array) -> Array:
    return 1 / (1 + np.exp(-x))


def total_order_key(x: Array) -> Array:
    """Integers that sort like XLA's float total order (-NaN < -inf < ... -0 < +0 ... < NaN)."""
    if x.dtype.itemsize == 1 or x.dtype.itemsize == 2 and x.dtype != np.float16:
        x = x.astype(np.float32)  # ml_dtypes formats widen exactly, order kept
    signed = _signed_view(np.ascontiguousarray(x)).astype(np.int64)
    magnitude_mask = (1 << (x.dtype.itemsize * 8 - 1)) - 1
    return np.where(signed < 0, signed ^ magnitude_mask, signed)


_UNARY_FLOAT: dict[Op, Callable[..., Callable[..., Array]]] = {
    Op.EXP: _float_op(np.exp), Op.EXPM1: _float_op(np.expm1), Op.LOG: _float_op(np.log),
    Op.LOG1P: _float_op(np.log1p), Op.TANH: _float_op(np.tanh), Op.SQRT: _float_op(np.sqrt),
    Op.RSQRT: _float_op(lambda v: 1 / np.sqrt(v)), Op.CBRT: _float_op(np.cbrt),
    Op.SIN: _float_op(np.sin), Op.COS: _float_op(np.cos), Op.TAN: _float_op(np.tan),
    Op.FLOOR: _float_op(np.floor), Op.CEIL: _float_op(np.ceil),
    Op.ROUND_NEAREST_EVEN: _float_op(np.rint),
    Op.ROUND_NEAREST_AFZ: _float_op(_round_half_away), Op.LOGISTIC: _float_op(_logistic),
    Op.ATAN: _float_op(np.arctan), Op.SINH: _float_op(np.sinh), Op.COSH: _float_op(np.cosh),
    Op.ASIN: _float_op(np.arcsin), Op.ACOS: _float_op(np.arccos),
    Op.ASINH: _float_op(np.arcsinh), Op.ACOSH: _float_op(np.arccosh),
    Op.ATANH: _float_op(np.arctanh), Op.ERF: _float_op(_erf),
}

_BINARY_FLOAT: dict[Op, Callable[..., Callable[..., Array]]] = {
    Op.ADD: _float_op(np.add), Op.SUBTRACT: _float_op(np.subtract),
    Op.MULTIPLY: _float_op(np.multiply), Op.DIVIDE: _float_op(np.divide),
    Op.REMAINDER: _float_op(np.fmod), Op.POWER: _float_op(np.power, False),
    Op.MAXIMUM: _float_op(np.maximum), Op.MINIMUM: _float_op(np.minimum),
    Op.ATAN2: _float_op(np.arctan2, False),
}

# integer ops that are one numpy ufunc (two's complement wrap-around is numpy's too)
_INT_UFUNCS: dict[Op, np.ufunc] = {
    Op.ADD: np.add, Op.SUBTRACT: np.subtract, Op.MULTIPLY: np.multiply,
    Op.MAXIMUM: np.maximum, Op.MINIMUM: np.minimum, Op.AND: np.bitwise_and,
    Op.OR: np.bitwise_or, Op.XOR: np.bitwise_xor,
}

_BINARY_INT: dict[Op, Callable[..., Array]] = {
    **{op: (lambda u: lambda t, a, b: u(a, b))(ufunc) for op, ufunc in _INT_UFUNCS.items()},
    Op.DIVIDE: _int_divide, Op.REMAINDER: _int_remainder, Op.POWER: _int_power,
    Op.SHIFT_LEFT: _shift_left, Op.SHIFT_RIGHT_LOGICAL: _shift_right_logical,
    Op.SHIFT_RIGHT_ARITHMETIC: _shift_right_arithmetic,
}

# PRED is a 1-bit value: add / maximum behave as or, multiply / minimum as and.
_BINARY_PRED: dict[Op, Callable[[Array, Array], Array]] = {
    Op.AND: np.logical_and, Op.OR: np.logical_or, Op.XOR: np.logical_xor,
    Op.MAXIMUM: np.logical_or, Op.MINIMUM: np.logical_and, Op.ADD: np.logical_or,
    Op.MULTIPLY: np.logical_and,
}


@functools.lru_cache(maxsize=None)
def unary_op(opcode: Op, t: PrimitiveType, flushed: tuple[bool, ...] = ()
             ) -> Callable[[Array], Array]:
    """The type-preserving unary elementwise op on values of element type `t`, resolved
    once; InterpError when the interpreter does not support it. `flushed` (per operand)
    says the caller knows the operand holds no subnormal: the op skips flushing it."""
    if opcode in (Op.COPY, Op.OPTIMIZATION_BARRIER):
        return lambda x: x
    if sb.is_sub_byte(t):
        return sb.lift(unary_op(opcode, sb.carrier_type(sb.reading(opcode, t))), opcode, t)
    if is_complex(t):
        return cx.complex_unary_op(opcode, t)
    if opcode is Op.NOT:
        return np.logical_not if t == PrimitiveType.PRED else np.invert
    if opcode is Op.NEGATE and t != PrimitiveType.PRED:
        return np.negative
    if opcode is Op.ABS and t != PrimitiveType.PRED:
        return np.copy if is_unsigned(t) else np.abs
    if opcode is Op.SIGN and t != PrimitiveType.PRED:
        return functools.partial(_sign, t)
    if opcode is Op.CLZ and t in _SUPPORTED_INTEGERS:
        return functools.partial(_count_leading_zeros, t)
    if opcode is Op.POPULATION_COUNT and t in _SUPPORTED_INTEGERS:
        return lambda x: np.bitwise_count(_unsigned_view(np.ascontiguousarray(x))).astype(x.dtype)
    if is_floating(t) and (resolve := _UNARY_FLOAT.get(opcode)) is not None:
        return resolve(t, flushed)
    raise InterpError(f"{opcode.mnemonic} on {primitive_type_name(t)} is not supported "
                      "by the interpreter")


@functools.lru_cache(maxsize=None)
def binary_op(opcode: Op, t: PrimitiveType, flushed: tuple[bool, ...] = ()
              ) -> Callable[[Array, Array], Array]:
    """The type-preserving binary elementwise op on operands of element type `t`, resolved
    once; InterpError when the interpreter does not support it. `flushed` as for unary_op."""
    if t == PrimitiveType.PRED:
        if (fn_pred := _BINARY_PRED.get(opcode)) is not None:
            return fn_pred
    elif sb.is_sub_byte(t):
        return sb.lift(binary_op(opcode, sb.carrier_type(sb.reading(opcode, t))), opcode, t)
    elif is_complex(t):
        if opcode is Op.COMPLEX:  # t is the result type; the parts are moved, not computed
            dtype = numpy_dtype(t)
            return lambda re, im: cx.compose_exact(re, im, dtype)
        return cx.complex_binary_op(opcode, t)
    elif is_floating(t):
        if (resolve := _BINARY_FLOAT.get(opcode)) is not None:
            return resolve(t, flushed)
    elif (fn := _BINARY_INT.get(opcode)) is not None:
        int_fn = fn
        return lambda a, b: np.asarray(int_fn(t, a, b)).astype(a.dtype, copy=False)
    raise InterpError(f"{opcode.mnemonic} on {primitive_type_name(t)} is not supported "
                      "by the interpreter")


@functools.lru_cache(maxsize=None)
def binary_op_into(opcode: Op, t: PrimitiveType, flushed: tuple[bool, ...] = ()
                   ) -> Callable[[Array, Array, Array], Array] | None:
    """binary_op(opcode, t, flushed) computing into a given buffer of the result's shape
    and dtype (which may be either operand's own): op(a, b, into) -> the result (`into`,
    or a new array where a subnormal result had to be flushed); None for the ops that are
    not one numpy call of type-preserving result (narrow floats, pred, complex, integer
    divide, shifts ...)."""
    if t in _SUPPORTED_INTEGERS and (ufunc := _INT_UFUNCS.get(opcode)) is not None:
        return lambda a, b, into: ufunc(a, b, out=into)
    if t in (PrimitiveType.F32, PrimitiveType.F64) and opcode in _BINARY_FLOAT:
        apply = _BINARY_FLOAT[opcode](t, flushed)
        return lambda a, b, into: apply(a, b, into=into)
    return None


def flushes_result(opcode: Op, t: PrimitiveType) -> bool:
    """Whether unary_op / binary_op of `opcode` on f32 / f64 `t` flush their result (every
    float op of the _float_op tables: its value never holds a subnormal)."""
    return t in (PrimitiveType.F32, PrimitiveType.F64) and \
        (opcode in _UNARY_FLOAT or opcode in _BINARY_FLOAT)


def unary(opcode: Op, t: PrimitiveType, x: Array) -> Array:
    """A type-preserving unary elementwise op on values of element type `t`."""
    return unary_op(opcode, t)(x)


def binary(opcode: Op, t: PrimitiveType, a: Array, b: Array) -> Array:
    """A type-preserving binary elementwise op on operands of element type `t`."""
    return binary_op(opcode, t)(a, b)


_COMPARISONS: dict[str, Callable[[Array, Array], Array]] = {
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
    "GT": np.greater, "GE": np.greater_equal}


def compare(direction: str, comparison_type: str | None, t: PrimitiveType,
            a: Array, b: Array) -> Array:
    """compare(a, b), direction=EQ/NE/LT/LE/GT/GE; type=TOTALORDER orders floats totally."""
    fn = _COMPARISONS.get(direction)
    if fn is None:
        raise InterpError(f"compare: unknown direction {direction!r}")
    if is_complex(t):
        return cx.complex_compare(direction, a, b)
    if is_floating(t):
        if comparison_type == "TOTALORDER":
            return fn(total_order_key(a), total_order_key(b))
        return fn(widen_flushed(t, a), widen_flushed(t, b))
    if sb.is_sub_byte(t):
        how = sb.reading(Op.COMPARE, t)
        return fn(sb.carried(a, t, how), sb.carried(b, t, how))
    return fn(a, b)


def convert(x: Array, source: PrimitiveType, target: PrimitiveType) -> Array:
    """XLA's convert: see the module contract for the integer and pred rules. A complex
    converts to a complex of another width part by part; a real becomes the real part of a
    complex (a float rounded to the part type); XLA defines no convert out of complex."""
    dtype = numpy_dtype(target)
    if is_complex(target):
        if is_complex(source):
            return cx.compose_exact(*cx.split(x), dtype)
        part = PrimitiveType.F32 if target == PrimitiveType.C64 else PrimitiveType.F64
        real = convert(x, source, part) if source != PrimitiveType.PRED \
            else x.astype(numpy_dtype(part))
        return cx.compose_exact(real, np.zeros((), real.dtype), dtype)
    if is_complex(source):
        raise InterpError(f"convert from {primitive_type_name(source)} to "
                          f"{primitive_type_name(target)}: XLA converts complex values only "
                          "to complex types (use real / imag)")
    if sb.is_sub_byte(source):  # its value in the 8-bit type of its signedness
        how = sb.reading(Op.CONVERT, source)
        x, source = sb.carried(x, source, how), sb.carrier_type(how)
    if is_floating(source) and not (target == PrimitiveType.PRED and
                                    source in _NARROW_FLOAT_TYPES):
        x = widen_flushed(source, x)  # XLA CPU tests bf16 / f16 against 0 bit-exactly
    if target == PrimitiveType.PRED:
        return x != 0
    if source == PrimitiveType.PRED or not is_floating(source) or is_floating(target):
        return x.astype(dtype, copy=False)  # one array may be two values (values.dead_array)
    if sb.is_sub_byte(target):
        return sb.saturated_from_float(x, target)
    info = np.iinfo(dtype)
    wide = x.astype(np.float64)
    truncated = np.trunc(np.nan_to_num(wide, nan=0.0, posinf=np.inf, neginf=-np.inf))
    # Saturate in float64 first, then pick the exact bounds (float64 cannot hold INT64_MAX).
    out = np.clip(truncated, max(float(info.min), -2.0**63), min(float(info.max), 2.0**64))
    too_low = truncated <= float(info.min)
    too_high = truncated >= float(info.max)
    in_range = np.where(too_low | too_high, 0, out).astype(dtype)
    return np.where(too_low, info.min, np.where(too_high, info.max, in_range)).astype(dtype)


def select(pred: Array, on_true: Array, on_false: Array) -> Array:
    return np.where(pred, on_true, on_false)


def clamp(t: PrimitiveType, low: Array, x: Array, high: Array) -> Array:
    """clamp(low, x, high) = min(max(x, low), high) with the type's max / min semantics."""
    return binary(Op.MINIMUM, t, binary(Op.MAXIMUM, t, x, low), high)


def is_finite(t: PrimitiveType, x: Array) -> Array:
    return np.isfinite(x.astype(_compute_dtype(t), copy=False))


# (exponent bits, mantissa bits) of the float layouts reduce-precision works on in place
_FLOAT_LAYOUTS = {PrimitiveType.F16: (5, 10), PrimitiveType.BF16: (8, 7),
                  PrimitiveType.F32: (8, 23), PrimitiveType.F64: (11, 52)}


def reduce_precision(t: PrimitiveType, x: Array, exponent_bits: int,
                     mantissa_bits: int) -> Array:
    """XLA's reduce-precision on the bits of x (EmitReducePrecisionIR, quiet_nans=false):
    round the mantissa to `mantissa_bits` (nearest, ties to even), then an exponent beyond
    the reduced range becomes a signed inf and one at or below its bottom a signed zero
    (subnormals of the reduced type included: truncated, not rounded); NaN stays the same NaN
    (XLA's emitter would make it +inf with no mantissa bits, but XLA CPU returns the NaN:
    measured on jaxlib 0.10.2, exponent_bits=2, mantissa_bits=0)."""
    if t not in _FLOAT_LAYOUTS:
        raise InterpError(f"reduce-precision on {primitive_type_name(t)} is not supported "
                          "by the interpreter")
    src_exponent, src_mantissa = _FLOAT_LAYOUTS[t]
    nbits = 1 + src_exponent + src_mantissa
    utype = np.dtype(f"uint{nbits}")
    x = np.ascontiguousarray(x)
    bits = x.view(utype).copy()
    is_nan = np.isnan(x.astype(np.float32) if t == PrimitiveType.BF16 else x)
    if mantissa_bits < src_mantissa:
        shift = src_mantissa - mantissa_bits
        last = utype.type(1 << shift)
        bias = ((bits & last) >> utype.type(shift)) + utype.type((1 << (shift - 1)) - 1)
        bits = (bits + bias) & ~utype.type((1 << shift) - 1)
    if exponent_bits < src_exponent:
        exponent_bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exp_mask = utype.type(((1 << src_exponent) - 1) << src_mantissa)
        exponent = bits & exp_mask
        signed_zero = bits & utype.type(1 << (nbits - 1))
        bits = np.where(exponent > utype.type((exponent_bias + reduced_bias) << src_mantissa),
                        signed_zero | exp_mask, bits)
        bits = np.where(exponent <= utype.type((exponent_bias - reduced_bias) << src_mantissa),
                        signed_zero, bits)
    result = bits.astype(utype).view(x.dtype)
    return np.where(is_nan, x, result).astype(x.dtype)

