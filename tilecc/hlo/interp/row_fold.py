"""Ordered row updates for scatter with a standard reducer: XLA CPU's sequential order at
the cost of one pass over the updates.

Contract: `fold_rows(rows, targets, source, picks, opcode, t, op)` sets, for j = 0, 1, ...
in order, rows[targets[j]] = op(rows[targets[j]], source[picks[j]]) -- op is the reducer's
elementwise op (elementwise.binary_op), rows are (R, W) and source (S, W) arrays of element
type t that share no memory -- so every target row folds its updates left to right from
its own value, as XLA CPU's scatter loop does (float sums round in that order, bit for bit).

How: a stable sort by target gives each update its rank among the updates of its row; the
touched rows are ordered by how many updates they take (most first), and round k adds the
k-th update of every row that has one. The rows with more than k updates are a prefix of
that order, and the updates of round k are laid out in that order, so a block of touched
rows (BLOCK_BYTES of them, gathered once into a buffer that stays in cache) takes each
round as one ufunc on a contiguous slice: gather the block, add the block's updates of
round 0, 1, ... (each gathered into a second buffer), write the block back. Every row is
read and written once; the updates are read once. Gathers are np.take (a third faster
than fancy indexing on rows) into the reused buffers.

Exactness of the in-place ufunc: integer reducers (wrap-around) are numpy's own ufuncs.
An f32 / f64 add / max / min flushes subnormals on XLA CPU (elementwise._float_op); when
every value taken in (the block's rows and every update) is zero, inf, NaN or at least
2^(mantissa bits) times the smallest normal, all of them are multiples of the smallest
normal, so is every sum and every rounded sum, and none is subnormal: the flush never
changes anything and the plain ufunc gives the same bits. Seeing a smaller value (checked
on data already in cache) redoes that block, from its rows still unchanged, with `op`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import PrimitiveType, is_floating

Array = np.ndarray
BLOCK_BYTES = 1 << 18
"""Rows per block (and updates per ufunc call): the block and one round's updates, 256 KiB
each, stay in cache (64 KiB to 2 MiB measured: 256 KiB to 1 MiB alike, smaller slower)."""

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
    check = _bound_check(t) if ufunc is not None else None
    block_rows = max(1, BLOCK_BYTES // max(1, source.itemsize * source.shape[1]))
    rounds = list(zip(per_round.tolist(), offsets.tolist()))
    buffers = (np.empty((block_rows,) + rows.shape[1:], rows.dtype),
               np.empty((block_rows,) + source.shape[1:], source.dtype))
    for lo in range(0, touched.size, block_rows):
        where = touched[lo:lo + block_rows]
        acc = None if ufunc is None else \
            _fold_block(rows, where, source, layout, rounds, lo, ufunc, check, buffers)
        if acc is None:  # not a ufunc, or a value the ufunc may not take: the op itself
            acc = _fold_block(rows, where, source, layout, rounds, lo, op, None, None)
        rows[where] = acc


def _fold_block(rows: Array, where: Array, source: Array, layout: Array,
                rounds: list[tuple[int, int]], lo: int, op: Callable[..., Array] | np.ufunc,
                check: Callable[[Array], bool] | None,
                buffers: tuple[Array, Array] | None) -> Array | None:
    """The touched rows `where` (accumulator rows lo, lo + 1, ...) folded through every
    round that reaches them, with `op` in place (into `buffers`) when it is a ufunc;
    None when `check` refuses a value (`rows` is unchanged: the caller redoes the block)."""
    count = where.size
    if buffers is None:
        acc = np.take(rows, where, axis=0)
    else:  # mode="clip" (indices are in range): with out=, "raise" takes a copy first
        acc = np.take(rows, where, axis=0, out=buffers[0][:count], mode="clip")
    if check is not None and not check(acc):
        return None
    for width, base in rounds:
        if width <= lo:  # rounds reach ever fewer rows: none of the later ones reaches these
            break
        n = min(count, width - lo)
        picks = layout[base + lo:base + lo + n]
        if buffers is None:
            acc[:n] = op(acc[:n], np.take(source, picks, axis=0))
            continue
        block = np.take(source, picks, axis=0, out=buffers[1][:n], mode="clip")
        if check is not None and not check(block):
            return None
        op(acc[:n], block, out=acc[:n])
    return acc


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
    signed = np.dtype(unsigned).str.replace("u", "i")
    limit = ((mantissa + 1) << mantissa << 1) - 1
    one = np.ones((), unsigned)
    magnitude = (1 << (8 * np.dtype(unsigned).itemsize - 1)) - 1
    bound = limit + 1 >> 1  # bits of 2^mantissa smallest normals

    def check(x: Array) -> bool:
        if x.size == 0:
            return True
        # the usual case, no zero: two reductions and no temporary. As unsigned integers
        # the smallest pattern is the smallest positive magnitude (negatives sort above),
        # as signed the smallest is the smallest negative magnitude (positives above);
        # a NaN's magnitude is above every finite one
        if min(int(x.view(unsigned).min()) & magnitude,
               int(x.view(signed).min()) & magnitude) >= bound:
            return True
        bits = np.left_shift(np.ascontiguousarray(x).view(unsigned), one)
        np.subtract(bits, one, out=bits)
        return bool(bits.min() >= limit)
    return check
