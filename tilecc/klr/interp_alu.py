"""The KLR reference interpreter's ALU, activation functions and write conversion, keyed by
KLR's own enums (klr/ast.py order); written apart from the BIR simulator's tables.

Contract (NKI semantics, reference/klr-bir.md):
- `alu(op, x, y)`: arithmetic AluOps take float32 operands and give float32 (comparisons
  and logical ops 1.0 / 0.0, NaN unequal to all; max / min propagate NaN and order
  -0 < +0 as IEEE 754-2019 maximum / minimum; mod is C fmod; pow is evaluated in
  float64 and rounded to float32 (deterministic, unlike float32 libm pow); bypass returns x; unary
  ops read x); bitwise ops act on the integer bits of the tile data (x, or y when x is a
  lone scalar; float data is an error; float immediates converted by value); shifts by >= the bit width give 0 (arithmetic right:
  the sign fill). `binary` applies the reverse flag and keeps the data's shape.
- `activation(func, x)`: evaluated in float64 and rounded to float32.
- `to_dtype(values, dtype)`: float32 to floats by round-to-nearest-even (ml_dtypes for
  bf16 / fp8), to integers rounded half-to-even, saturated, NaN -> 0; integers to
  integers by their bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import ml_dtypes
import numpy as np

from tilecc.errors import InterpError
from tilecc.klr import ast as k

F32 = np.float32
A = k.AluOp

NP_DTYPE: dict[k.Dtype, np.dtype] = {
    k.Dtype.bfloat16: np.dtype(ml_dtypes.bfloat16), k.Dtype.float8e3: np.dtype(ml_dtypes.float8_e3m4),
    k.Dtype.float8e4: np.dtype(ml_dtypes.float8_e4m3), k.Dtype.float8e5: np.dtype(ml_dtypes.float8_e5m2),
    k.Dtype.float16: np.dtype("float16"), k.Dtype.float32: np.dtype("float32"),
    k.Dtype.float32r: np.dtype("float32"), k.Dtype.int8: np.dtype("int8"),
    k.Dtype.int16: np.dtype("int16"), k.Dtype.int64: np.dtype("int64"),
    k.Dtype.int32: np.dtype("int32"), k.Dtype.uint8: np.dtype("uint8"),
    k.Dtype.uint16: np.dtype("uint16"), k.Dtype.uint32: np.dtype("uint32"),
    k.Dtype.uint64: np.dtype("uint64"), k.Dtype.float8_e4m3: np.dtype(ml_dtypes.float8_e4m3),
    k.Dtype.float8_e4m3fn: np.dtype(ml_dtypes.float8_e4m3fn),
}


def np_dtype(dtype: k.Dtype) -> np.dtype:
    if dtype not in NP_DTYPE:
        raise InterpError(f"dtype {dtype.name} has no element representation")
    return NP_DTYPE[dtype]


# ---------------------------------------------------------------- the ALU, in KLR's enum space

def _flag(b: np.ndarray) -> np.ndarray:
    return np.where(b, F32(1), F32(0))


def _shl(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    wide = x.astype(np.uint64) if x.dtype.kind == "u" else x.view(f"u{x.dtype.itemsize}").astype(np.uint64)
    c64 = np.asarray(c).astype(f"u{x.dtype.itemsize}").astype(np.uint64)
    mask = np.uint64((1 << bits) - 1)
    shifted = np.where(c64 < bits, (wide << np.minimum(c64, np.uint64(63))) & mask, np.uint64(0))
    return shifted.astype(f"u{x.dtype.itemsize}").view(x.dtype)


def _lshr(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    wide = x.view(f"u{x.dtype.itemsize}").astype(np.uint64)
    c64 = np.asarray(c).astype(f"u{x.dtype.itemsize}").astype(np.uint64)
    shifted = np.where(c64 < bits, wide >> np.minimum(c64, np.uint64(63)), np.uint64(0))
    return shifted.astype(f"u{x.dtype.itemsize}").view(x.dtype)


def _ashr(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    wide = x.view(f"i{x.dtype.itemsize}").astype(np.int64)
    c64 = np.minimum(np.asarray(c).astype(f"u{x.dtype.itemsize}").astype(np.uint64),
                     np.uint64(bits - 1)).astype(np.int64)
    return (wide >> c64).astype(f"i{x.dtype.itemsize}").view(x.dtype)


def _ieee_max(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """IEEE 754-2019 maximum: NaN if either is NaN, and -0 < +0."""
    x, y = np.broadcast_arrays(x, y)
    tie = np.where(np.signbit(x), y, x)  # equal values: prefer the one without a sign bit
    out = np.where(x > y, x, np.where(y > x, y, tie))
    return np.where(np.isnan(x) | np.isnan(y), F32(np.nan), out)


# op -> (is_bitwise, fn(x, y), reduction identity or None)
ALU: dict[k.AluOp, tuple[bool, Callable[[np.ndarray, np.ndarray], np.ndarray], float | None]] = {
    A.abs: (False, lambda x, y: np.fabs(x), None),
    A.add: (False, lambda x, y: x + y, 0.0),
    A.arith_shift_left: (True, _shl, None),
    A.arith_shift_right: (True, _ashr, None),
    A.average: (False, lambda x, y: (x + y) / F32(2), None),
    A.bitwise_and: (True, lambda x, y: x & y, -1),
    A.bitwise_not: (True, lambda x, y: ~x, None),
    A.bitwise_or: (True, lambda x, y: x | y, 0),
    A.bitwise_xor: (True, lambda x, y: x ^ y, 0),
    A.bypass: (False, lambda x, y: x, None),
    A.divide: (False, lambda x, y: x / y, None),
    A.is_equal: (False, lambda x, y: _flag(x == y), None),
    A.is_ge: (False, lambda x, y: _flag(x >= y), None),
    A.is_gt: (False, lambda x, y: _flag(x > y), None),
    A.is_le: (False, lambda x, y: _flag(x <= y), None),
    A.is_lt: (False, lambda x, y: _flag(x < y), None),
    A.logical_and: (False, lambda x, y: _flag((x != 0) & (y != 0)), 1.0),
    A.logical_or: (False, lambda x, y: _flag((x != 0) | (y != 0)), 0.0),
    A.logical_shift_left: (True, _shl, None),
    A.logical_shift_right: (True, _lshr, None),
    A.logical_xor: (False, lambda x, y: _flag((x != 0) != (y != 0)), 0.0),
    A.max: (False, lambda x, y: _ieee_max(x, y), -math.inf),
    A.min: (False, lambda x, y: _ieee_max(-x, -y) * F32(-1), math.inf),
    A.mod: (False, lambda x, y: np.fmod(x, y), None),
    A.mult: (False, lambda x, y: x * y, 1.0),
    A.not_equal: (False, lambda x, y: _flag(x != y), None),
    A.pow: (False, lambda x, y: (x.astype(np.float64) ** y.astype(np.float64)).astype(F32), None),
    A.rsqrt: (False, lambda x, y: F32(1) / np.sqrt(x), None),
    A.subtract: (False, lambda x, y: x - y, 0.0),
}


def alu(op: k.AluOp, x: np.ndarray | np.generic, y: np.ndarray | np.generic) -> np.ndarray:
    bitwise, fn, _ = ALU[op]
    x, y = np.asarray(x), np.asarray(y)
    if bitwise:
        # the tile data's bits: x, or y when x is a lone scalar (a reversed stage)
        like = y.dtype if x.ndim == 0 and y.ndim > 0 else x.dtype
        if like.kind not in "iu":
            raise InterpError(f"bitwise op {op.name} on non-integer data ({like})")
        x, y = (v.astype(np.int64).astype(like) if v.dtype.kind == "f" else v.astype(like)
                for v in (x, y))
        return np.asarray(fn(x, y))
    with np.errstate(all="ignore"):
        return np.asarray(fn(x.astype(F32), y.astype(F32)), dtype=F32)


def binary(op: k.AluOp, left: np.ndarray, right: np.ndarray | np.generic, swap: bool) -> np.ndarray:
    """`left op right` (swapped if asked), always of left's shape."""
    out = alu(op, right, left) if swap else alu(op, left, right)
    return np.broadcast_to(out, np.shape(left))


def identity_of(op: k.AluOp) -> float:
    ident = ALU[op][2]
    if ident is None:
        raise InterpError(f"{op.name} is not a reduction op")
    return float(ident)


def fold(op: k.AluOp, start: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """start op rows[:, 0] op rows[:, 1] ... (element by element, float32)."""
    acc = start.astype(F32)
    for i in range(rows.shape[1]):
        acc = alu(op, acc, rows[:, i])
    return acc


def row_fold(op: k.AluOp, start: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """fold(), with the row-sum shortcut for add (all accumulating reductions but a few)."""
    if op == A.add:
        with np.errstate(all="ignore"):
            return (start.astype(F32) + rows.astype(F32).sum(axis=1, dtype=F32)).astype(F32)
    return fold(op, start, rows)


# ---------------------------------------------------------------- activation functions

def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x


def _sig(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


ACT: dict[k.ActivationFunc, Callable[[np.ndarray], np.ndarray]] = {
    k.ActivationFunc.abs: np.abs,
    k.ActivationFunc.arctan: np.arctan,
    k.ActivationFunc.copy: lambda x: x,
    k.ActivationFunc.erf: _erf,
    k.ActivationFunc.erf_dx: lambda x: 2.0 / math.sqrt(math.pi) * np.exp(-x * x),
    k.ActivationFunc.exp: np.exp,
    k.ActivationFunc.gelu: lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))),
    k.ActivationFunc.gelu_apprx_tanh: lambda x: 0.5 * x * (
        1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))),
    k.ActivationFunc.gelu_dx: lambda x: 0.5 * (1.0 + _erf(x / math.sqrt(2.0)))
    + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi),
    k.ActivationFunc.log: np.log,
    k.ActivationFunc.mish: lambda x: x * np.tanh(np.logaddexp(0.0, x)),
    k.ActivationFunc.reciprocal: lambda x: 1.0 / x,
    k.ActivationFunc.relu: lambda x: np.where(np.isnan(x), x, np.where(x > 0, x, 0.0)),
    k.ActivationFunc.rsqrt: lambda x: 1.0 / np.sqrt(x),
    k.ActivationFunc.sigmoid: _sig,
    k.ActivationFunc.sign: np.sign,
    k.ActivationFunc.silu: lambda x: x * _sig(x),
    k.ActivationFunc.silu_dx: lambda x: _sig(x) * (1.0 + x * (1.0 - _sig(x))),
    k.ActivationFunc.sin: np.sin,
    k.ActivationFunc.softplus: lambda x: np.logaddexp(0.0, x),
    k.ActivationFunc.sqrt: np.sqrt,
    k.ActivationFunc.square: lambda x: x * x,
    k.ActivationFunc.tanh: np.tanh,
    k.ActivationFunc.gelu_apprx_sigmoid: lambda x: x * _sig(1.702 * x),
    k.ActivationFunc.gelu_apprx_sigmoid_dx: lambda x: _sig(1.702 * x) * (
        1.0 + 1.702 * x * (1.0 - _sig(1.702 * x))),
}


def activation(func: k.ActivationFunc, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(ACT[func](x.astype(np.float64)), dtype=np.float64).astype(F32)


# ---------------------------------------------------------------- conversion on write

def to_dtype(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    values = np.asarray(values)
    if dtype.kind in "iu" and values.dtype.kind not in "iu":
        lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
        v = np.nan_to_num(values.astype(np.float64), nan=0.0, posinf=hi, neginf=lo)
        return np.round(np.clip(v, lo, hi)).astype(dtype)
    with np.errstate(all="ignore"):
        return values.astype(dtype)
