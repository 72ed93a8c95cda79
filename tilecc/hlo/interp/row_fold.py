"""Ordered row updates for scatter with a standard reducer: XLA CPU's sequential order at
the cost of one pass over the updates.

Contract: `fold_rows(rows, targets, source, picks, opcode, t, op)` sets, for j = 0, 1, ...
in order, rows[targets[j]] = op(rows[targets[j]], source[picks[j]]) -- op is the reducer's
elementwise op (elementwise.binary_op), rows are (R, W) and source (S, W) arrays of element
type t -- so every target row folds its updates left to right from its own value, as XLA
CPU's scatter loop does (float sums round in that order, bit for bit).

How: a stable sort by target gives each update its rank among the updates of its row; the
touched rows, ordered by how many updates they take (most first), are gathered once into
an accumulator, and round k adds the k-th update of every row that has one. The rows with
more than k updates are a prefix of the accumulator, and the updates of round k are
gathered in that order, so each round is one ufunc on a contiguous block (in blocks of
BLOCK_BYTES that stay in cache), not a gather and scatter of the rows per round.

Exactness of the in-place ufunc: integer reducers (wrap-around) are numpy's own ufuncs.
An f32 / f64 add / max / min flushes subnormals on XLA CPU (elementwise._float_op); when
every value taken in (the accumulator's rows and every update) is zero, inf, NaN or at
least 2^(mantissa bits) times the smallest normal, all of them are multiples of the
smallest normal, so is every sum and every rounded sum, and none is subnormal: the flush
never changes anything and the plain ufunc gives the same bits. Seeing a smaller value
(checked per block, on data already in cache) restarts the fold with `op` itself.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import PrimitiveType, is_floating, numpy_dtype

Array = np.ndarray
BLOCK_BYTES = 1 << 18
"""Updates gathered and combined per ufunc call: 256 KiB stay in cache between the gather,
the check and the add (measured best among 64 KiB to 1 MiB)."""

_INT_UFUNCS = {Op.ADD: np.add, Op.MULTIPLY: np.multiply, Op.MAXIMUM: np.maximum,
               Op.MINIMUM: np.minimum, Op.AND: np.bitwise_and, Op.OR: np.bitwise_or,
               Op.XOR: np.bitwise_xor}
# float reducers whose result is never subnormal when no operand is below the bound
_FLOAT_UFUNCS = {Op.ADD: np.add, Op.MAXIMUM: np.maximum, Op.MINIMUM: np.minimum}
_FLOAT_BITS = {PrimitiveType.F32: (np.uint32, 23), PrimitiveType.F64: (np.uint64, 52)}


def fold_rows(rows: Array, targets: Array, source: Array, picks: Array, opcode: Op,
              t: PrimitiveType, op: Callable[[Array, Array], Array]) -> None:
    """rows[targets[j]] = op(rows[targets[j]], source[picks[j]]) in j order; see the contract."""
    count = targets.size
    if count == 0:
        return
    order = np.argsort(_small_keys(targets), kind="stable")
    by_target = targets[order]
    first = np.empty(count, bool)
    first[0] = True
    np.not_equal(by_target[1:], by_target[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    group = np.cumsum(first) - 1  # the touched row of each sorted update
    rank = np.arange(count) - starts[group]
    sizes = np.diff(np.append(starts, count))
    most_first = np.argsort(_small_keys(sizes.max() - sizes), kind="stable")
    place = np.empty(most_first.size, np.int64)
    place[most_first] = np.arange(most_first.size)
    # rows with more than k updates, per round k, and where round k starts in the layout
    per_round = most_first.size - np.cumsum(np.bincount(sizes))[:-1]
    offsets = np.concatenate([[0], np.cumsum(per_round)[:-1]])
    layout = np.empty(count, np.int64)
    layout[offsets[rank] + place[group]] = picks[order]
    touched = by_target[starts[most_first]]
    ufunc = _inplace_ufunc(opcode, t)
    if ufunc is None or not _fold(rows, touched, source, layout, per_round, offsets,
                                  ufunc, _bound_check(t)):
        _fold(rows, touched, source, layout, per_round, offsets, op, None)


def _fold(rows: Array, touched: Array, source: Array, layout: Array, per_round: Array,
          offsets: Array, op: Callable[..., Array] | np.ufunc,
          check: Callable[[Array], bool] | None) -> bool:
    """The rounds with `op`, in place when it is a ufunc; `check` may refuse the values
    (then False, `rows` unchanged); True once `rows` holds the result."""
    inplace = isinstance(op, np.ufunc)
    acc = rows[touched]
    block_rows = max(1, BLOCK_BYTES // max(1, acc.itemsize * acc.shape[1]))
    if check is not None and not check(acc):
        return False
    for k, width in enumerate(per_round.tolist()):
        base = int(offsets[k])
        for lo in range(0, width, block_rows):
            hi = min(lo + block_rows, width)
            block = source[layout[base + lo:base + hi]]
            if check is not None and not check(block):
                return False
            if inplace:
                op(acc[lo:hi], block, out=acc[lo:hi])
            else:
                acc[lo:hi] = op(acc[lo:hi], block)
    rows[touched] = acc
    return True


def _small_keys(keys: Array) -> Array:
    """`keys` (non-negative) as uint16 when they fit: numpy's stable sort is then a radix sort."""
    return keys.astype(np.uint16) if keys.max() < 1 << 16 else keys


def _inplace_ufunc(opcode: Op, t: PrimitiveType) -> np.ufunc | None:
    if t in _FLOAT_BITS:
        return _FLOAT_UFUNCS.get(opcode)
    if is_floating(t) or t == PrimitiveType.PRED:
        return None
    return _INT_UFUNCS.get(opcode)


def _bound_check(t: PrimitiveType) -> Callable[[Array], bool] | None:
    """check(x): no element of x is nonzero and below 2^mantissa_bits smallest normals (None:
    integers need no check)."""
    if t not in _FLOAT_BITS:
        return None
    unsigned, mantissa = _FLOAT_BITS[t]
    # bits << 1 drops the sign; minus 1 sends zero to the top: below the limit = too small
    limit = ((mantissa + 1) << mantissa << 1) - 1
    one = np.ones((), unsigned)
    bound = numpy_dtype(t).type(2.0 ** mantissa * np.finfo(numpy_dtype(t)).tiny)

    def check(x: Array) -> bool:
        if x.size == 0:
            return True
        # the usual case in one pass: no zero (nor NaN) and every magnitude large enough
        if np.abs(x).min() >= bound:
            return True
        bits = np.left_shift(np.ascontiguousarray(x).view(unsigned), one)
        np.subtract(bits, one, out=bits)
        return bool(bits.min() >= limit)
    return check
