"""The ALU of the simulated engines: one table from BIR AluOpType to a numpy function.

This table is the living definition of what each BIR ALU op computes (DESIGN.md, KLR / BIR).
Contract, from the NKI ISA docs (nki.api.shared, "Supported Math Operators"):

- Arithmetic ops convert both operands to float32, compute in float32 and return float32
  (the caller casts to the destination dtype). Comparisons and logical ops return 1.0 / 0.0;
  a NaN compares unequal to everything (so `not_equal` is 1.0 and the others 0.0).
- Bitvec ops (bitwise_*, the shifts) need integer operands and act on their raw bits; the
  result keeps the data operand's integer dtype. A float immediate given to a bitvec op is
  converted by value (255.0 -> 255), as the klr tool writes every constant as float32.
  The integer dtype is the tile data's (port x, or port y when x is a scalar); float data,
  such as the float32 result of an arithmetic first stage, is an error.
- Every op is binary `op(x, y)` on the engine's two ALU ports; `x` is the data port. Unary
  ops (bitwise_not, abs, rsqrt) read `x` only; bypass returns `x`. Reverse flags swap the
  ports before the call, so `reverse + bypass` passes the other operand through.
- Shift counts are read as unsigned; a count >= the bit width shifts every bit out (0, or
  the sign fill for arith_shift_right) instead of wrapping the count as C on x86 would.
- max / min propagate NaN and order -0 < +0 (IEEE 754-2019 maximum / minimum, whatever
  the operand order); divide and mod follow IEEE float32
  (x / 0 = +-inf, fmod(x, 0) = NaN); mod is C fmod (sign of the dividend); mod_int is the
  integer remainder with the dividend's sign and 0 for a zero divisor. pow is the one
  op that IEEE does not round exactly (numpy's float32 pow differs by an ulp between its
  SIMD and scalar paths, i.e. with the memory layout): it is computed in float64 and
  rounded to float32, which makes it deterministic.

Reductions (tensor_reduce, reduce accumulators, partition reduce) and scans use the
`identity` and `ufunc` columns; an op without a ufunc can still be folded sequentially.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np

from tilecc.bir.enums import AluOpType
from tilecc.errors import SimError

AluFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
# a value on an ALU port: a tile view, a numpy scalar (an immediate or a 0-d read) or a
# Python number
Operand: TypeAlias = np.ndarray | np.generic | float | int

F32 = np.float32
F32_DTYPE = np.dtype(np.float32)


@dataclass(frozen=True, slots=True)
class AluEntry:
    """One ALU op: its kind, its numpy function, and what reductions need to know."""

    name: str
    kind: str  # "arith" or "bitvec"
    fn: AluFn
    identity: float | None = None  # start value of a reset reduction (None: not a reduce op)
    ufunc: np.ufunc | None = None  # vectorised reduce / accumulate when the fold is exact
    inplace: np.ufunc | None = None  # fn, for an arithmetic op that is one ufunc (out=...)


def _as_bool(x: np.ndarray) -> np.ndarray:
    return x != 0


def _bit_width(a: np.ndarray) -> int:
    return a.dtype.itemsize * 8


def _shift_count(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Shift counts as unsigned values in a's width (negative counts become huge ones)."""
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    return np.asarray(b).astype(unsigned)


def _shift_left(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    count = _shift_count(a, b)
    width = _bit_width(a)
    safe = np.minimum(count, width - 1).astype(a.dtype)
    return np.where(count >= width, np.zeros((), a.dtype), np.left_shift(a, safe))


def _arith_shift_right(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    signed = a.view(np.dtype(f"i{a.dtype.itemsize}"))
    count = _shift_count(a, b)
    width = _bit_width(a)
    safe = np.minimum(count, width - 1).astype(signed.dtype)
    return np.right_shift(signed, safe).view(a.dtype)


def _logical_shift_right(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    unsigned = a.view(np.dtype(f"u{a.dtype.itemsize}"))
    count = _shift_count(a, b)
    width = _bit_width(a)
    safe = np.minimum(count, width - 1).astype(unsigned.dtype)
    shifted = np.right_shift(unsigned, safe)
    return np.where(count >= width, np.zeros((), unsigned.dtype), shifted).view(a.dtype)


def _signed_zero_fix(x: np.ndarray, y: np.ndarray, r: np.ndarray, sign_of_max: bool) -> np.ndarray:
    """IEEE 754-2019 maximum / minimum order -0 < +0; np.maximum returns its second operand
    for equal values, so a max of (-0, +0) takes the sign bits' AND, a min their OR."""
    zero = (x == 0) & (y == 0)
    if not zero.any():
        return r
    xb, yb = np.broadcast_arrays(x, y)
    bits = (np.bitwise_and if sign_of_max else np.bitwise_or)(xb.view(np.uint32), yb.view(np.uint32))
    return np.where(zero, bits.view(F32), r)


def _max(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _signed_zero_fix(x, y, np.maximum(x, y), True)


def _min(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _signed_zero_fix(x, y, np.minimum(x, y), False)


def _mod_int(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    safe = np.where(b == 0, np.ones((), b.dtype), b)
    return np.where(b == 0, np.zeros((), a.dtype), np.fmod(a, safe)).astype(a.dtype)


def _flag(mask: np.ndarray) -> np.ndarray:
    return mask.astype(F32)


def _arith(name: str, fn: AluFn, identity: float | None = None,
           ufunc: np.ufunc | None = None) -> AluEntry:
    return AluEntry(name, "arith", fn, identity, ufunc, fn if isinstance(fn, np.ufunc) else None)


def _bitvec(name: str, fn: AluFn, identity: float | None = None,
            ufunc: np.ufunc | None = None) -> AluEntry:
    return AluEntry(name, "bitvec", fn, identity, ufunc)


# BIR AluOpType member name -> entry (reference/klr-bir.md "AluOpType"; 33 members).
ALU_TABLE: dict[str, AluEntry] = {
    "bypass": _arith("bypass", lambda x, y: x),
    "bitwise_not": _bitvec("bitwise_not", lambda x, y: np.invert(x)),
    "arith_shift_left": _bitvec("arith_shift_left", _shift_left),
    "arith_shift_right": _bitvec("arith_shift_right", _arith_shift_right),
    "add": _arith("add", np.add, 0.0, np.add),
    "subtract": _arith("subtract", np.subtract, 0.0),
    "mult": _arith("mult", np.multiply, 1.0, np.multiply),
    "divide": _arith("divide", np.divide),
    "max": _arith("max", _max, -np.inf, np.maximum),
    "min": _arith("min", _min, np.inf, np.minimum),
    "bitwise_and": _bitvec("bitwise_and", np.bitwise_and, -1, np.bitwise_and),
    "bitwise_or": _bitvec("bitwise_or", np.bitwise_or, 0, np.bitwise_or),
    "bitwise_xor": _bitvec("bitwise_xor", np.bitwise_xor, 0, np.bitwise_xor),
    "logical_and": _arith("logical_and", lambda x, y: _flag(_as_bool(x) & _as_bool(y)), 1.0),
    "logical_or": _arith("logical_or", lambda x, y: _flag(_as_bool(x) | _as_bool(y)), 0.0),
    "logical_xor": _arith("logical_xor", lambda x, y: _flag(_as_bool(x) ^ _as_bool(y)), 0.0),
    "logical_shift_left": _bitvec("logical_shift_left", _shift_left),
    "logical_shift_right": _bitvec("logical_shift_right", _logical_shift_right),
    "is_equal": _arith("is_equal", lambda x, y: _flag(x == y)),
    "not_equal": _arith("not_equal", lambda x, y: _flag(x != y)),
    "is_gt": _arith("is_gt", lambda x, y: _flag(x > y)),
    "is_ge": _arith("is_ge", lambda x, y: _flag(x >= y)),
    "is_lt": _arith("is_lt", lambda x, y: _flag(x < y)),
    "is_le": _arith("is_le", lambda x, y: _flag(x <= y)),
    "average": _arith("average", lambda x, y: (x + y) * F32(0.5)),
    "elemwise_mul": _arith("elemwise_mul", np.multiply, 1.0, np.multiply),
    "pow": _arith("pow", lambda x, y: np.power(x.astype(np.float64), y.astype(np.float64)).astype(F32)),
    "mod": _arith("mod", np.fmod),
    "rsqrt": _arith("rsqrt", lambda x, y: F32(1.0) / np.sqrt(x)),
    "abs": _arith("abs", lambda x, y: np.abs(x)),
    "abs_max": _arith("abs_max", lambda x, y: np.maximum(np.abs(x), np.abs(y)), 0.0, np.maximum),
    "abs_min": _arith("abs_min", lambda x, y: np.minimum(np.abs(x), np.abs(y)), np.inf, np.minimum),
    "mod_int": _bitvec("mod_int", _mod_int),
}


# the same entries keyed by AluOpType member (the executors' hot path)
ALU_BY_OP: dict[AluOpType, AluEntry] = {op: ALU_TABLE[op.name] for op in AluOpType}


def alu_entry(op: AluOpType | str) -> AluEntry:
    """The entry of a BIR AluOpType member (or its name); SimError for an unknown op."""
    # by exact type: an IntEnum numbered otherwise (KLR's AluOp) would hit by value
    if type(op) is AluOpType:
        return ALU_BY_OP[op]
    name = getattr(op, "name", op)
    if not isinstance(name, str) or (entry := ALU_TABLE.get(name)) is None:
        raise SimError(f"ALU op {name!r} is not implemented by the simulator")
    return entry


def to_f32(x: Operand) -> np.ndarray:
    """A value on an arithmetic ALU port: integers and narrow floats widened to float32."""
    if type(x) is np.ndarray and x.dtype is F32_DTYPE:  # the hot path: no conversion
        return x
    arr = np.asarray(x)
    if arr.dtype == F32:
        return arr
    return arr.astype(F32)


def to_bits(x: Operand, like: np.dtype) -> np.ndarray:
    """A value on a bitvec ALU port, in the integer dtype `like` (floats by value)."""
    arr = np.asarray(x)
    if arr.dtype == like:
        return arr
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise SimError("a bitvec op got a non-finite float operand")
        return arr.astype(np.int64).astype(like)
    return arr.astype(like)


def apply_alu(entry: AluEntry, x: Operand, y: Operand) -> np.ndarray:
    """`entry.fn(x, y)` with the operand conversions of the op's kind (module docstring)."""
    if entry.kind == "bitvec":
        xa, ya = np.asarray(x), np.asarray(y)
        # the bits are those of the tile data: port x, unless x is a scalar (a reversed
        # stage puts the immediate there); float data (e.g. after an arithmetic stage)
        # has no bits to act on
        like = xa.dtype if xa.ndim > 0 or ya.ndim == 0 else ya.dtype
        if like.kind not in "iu":
            raise SimError(f"bitvec op {entry.name} needs integer data, got {like}")
        return entry.fn(to_bits(xa, like), to_bits(ya, like))
    # float warnings (x / 0, inf - inf) are the semantics, silenced by `simulate` for speed
    result = entry.fn(to_f32(x), to_f32(y))
    if type(result) is np.ndarray and result.dtype is F32_DTYPE:  # the hot path
        return result
    return np.asarray(result, dtype=F32)


def apply_alu_into(entry: AluEntry, x: np.ndarray | np.generic, y: np.ndarray | np.generic,
                   out: np.ndarray) -> bool:
    """`apply_alu` straight into a float32 destination view when the op is one numpy ufunc
    and the operands broadcast to exactly `out`'s shape (saves a temporary and a copy);
    False when it cannot, and nothing was written."""
    if (fn := entry.inplace) is None or out.dtype is not F32_DTYPE:
        return False
    xa, ya = to_f32(x), to_f32(y)
    if not broadcasts_to(xa.shape, ya.shape, out.shape):
        return False
    fn(xa, ya, out=out)
    return True


def broadcasts_to(a: tuple[int, ...], b: tuple[int, ...], out: tuple[int, ...]) -> bool:
    """np.broadcast_shapes(a, b) == out, without its cost in the common cases (a tile and
    a scalar, two tiles of one shape; np.broadcast_shapes costs more than a small ufunc)."""
    if a == out and (b == out or not b):
        return True
    if b == out and not a:
        return True
    return np.broadcast_shapes(a, b) == out


def reduce_alu(entry: AluEntry, data: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Fold `data` over `axes` with the op (float32 for arithmetic, raw bits for bitvec).

    Ops with a ufunc fold with it; average is the float32 mean; any other op listed with an
    identity (subtract, logical_*, abs_max, abs_min) folds sequentially in element order,
    one vectorised step per element of the folded axes.
    """
    if entry.identity is None and entry.name != "average":
        raise SimError(f"ALU op {entry.name} is not a reduction op")
    if not axes:
        return data if entry.kind == "bitvec" else to_f32(data)
    # numpy folds over every axis give a numpy scalar: np.asarray keeps the ndarray result
    if entry.kind == "bitvec":
        if data.dtype.kind not in "iu":
            raise SimError(f"bitvec reduction {entry.name} needs integer data, got {data.dtype}")
        assert entry.ufunc is not None
        return np.asarray(entry.ufunc.reduce(data, axis=axes))
    values = to_f32(data)
    if entry.name == "average":
        return np.asarray(np.mean(values, axis=axes, dtype=F32))
    if entry.name in ("abs_max", "abs_min"):
        assert entry.ufunc is not None
        return np.asarray(entry.ufunc.reduce(np.abs(values), axis=axes))
    if entry.ufunc is not None:
        folded = np.asarray(entry.ufunc.reduce(values, axis=axes))
        if entry.name in ("max", "min"):
            folded = _fold_zero_sign(values, axes, folded, entry.name == "max")
        return folded
    flat = _move_to_back(values, axes)
    acc = flat[..., 0]
    for i in range(1, flat.shape[-1]):
        acc = apply_alu(entry, acc, flat[..., i])
    return acc


def _fold_zero_sign(values: np.ndarray, axes: tuple[int, ...], folded: np.ndarray,
                    is_max: bool) -> np.ndarray:
    """A max fold that lands on zero is +0 if any +0 was folded (min: -0 if any -0). A fold
    of one element is that element, its sign included: nothing to fix."""
    if folded.size == values.size or np.count_nonzero(folded) == folded.size:
        return folded   # one element per fold, or no fold landed on zero (NaN is nonzero)
    zero = folded == 0
    wanted_sign = ~np.signbit(values) if is_max else np.signbit(values)
    present = np.any((values == 0) & wanted_sign, axis=axes)
    plus, minus = F32(0.0), F32(-0.0)
    chosen = np.where(present, plus if is_max else minus, minus if is_max else plus)
    return np.where(zero, chosen, folded)


def _move_to_back(values: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Move `axes` to the back and flatten them into one axis (row-major)."""
    kept = [a for a in range(values.ndim) if a not in axes]
    moved = np.transpose(values, kept + list(axes))
    return moved.reshape(moved.shape[: len(kept)] + (-1,))


def fold_rows(entry: AluEntry, start: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per row r: start[r] op rows[r, 0] op rows[r, 1] ... in float32 (accumulator folds).

    Associative ops fold the row first and combine once; subtract subtracts the row sum;
    other reduction ops fold element by element (vectorised across rows).
    """
    if entry.identity is None:
        raise SimError(f"ALU op {entry.name} is not a reduction op")
    start = to_f32(start)
    if rows.shape[1] == 0:
        return start
    if entry.name == "subtract":
        return apply_alu(ALU_TABLE["subtract"], start, reduce_alu(ALU_TABLE["add"], rows, (1,)))
    if entry.ufunc is not None:
        return apply_alu(entry, start, reduce_alu(entry, rows, (1,)))
    acc = start
    values = to_f32(rows)
    for i in range(values.shape[1]):
        acc = apply_alu(entry, acc, values[:, i])
    return acc
