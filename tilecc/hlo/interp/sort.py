"""sort for the vectorized interpreter: XLA CPU's order, equal elements included.

Contract: `sort_values(xs, dim, comparator, is_stable, compared)` sorts the arrays `xs`
(each (B, *dims), sorted together) along HLO dimension `dim` into the order XLA CPU
gives. `comparator(pairs)` evaluates the sort's computation on flat lanes: it receives
[lhs_0, rhs_0, lhs_1, rhs_1, ...] (XLA's parameter order) and returns the pred lanes of
"lhs sorts before rhs". The stable replay is steered by a guess from the values
(`_guess`); the guess only decides how fast, never what comes out.

What XLA CPU does (xla/backends/cpu/runtime/sort_thunk.cc): every 1-D slice along the
sort dimension is sorted on its own, with libstdc++'s std::sort when is_stable=false and
std::stable_sort when true, the compiled comparator deciding (a single operand with a
plain LT / GT comparator uses std::less / std::greater instead: the same comparisons).
Both algorithms are replayed exactly (std_sort, std_stable_sort), so elements the
comparator calls equal -- and comparators that are no strict weak ordering, like LT on
NaN -- come out where XLA puts them (checked against XLA, tests marked oracle).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecc.hlo.interp.elementwise import total_order_key
from tilecc.hlo.interp.std_sort import std_sort_order
from tilecc.hlo.interp.std_stable_sort import std_stable_sort_order

Array = np.ndarray
Comparator = Callable[[list[Array]], Array]
Less = Callable[[Array, Array], Array]


def sort_values(xs: list[Array], dim: int, comparator: Comparator, is_stable: bool,
                compared: frozenset[int]) -> list[Array]:
    """`compared`: the operands whose parameters the comparator reads (the others get
    a placeholder lane array instead of a gather of their values)."""
    axis = 1 + dim
    moved = [np.moveaxis(x, axis, -1) for x in xs]
    shape = moved[0].shape
    n = shape[-1]
    rows = [np.ascontiguousarray(m).reshape(-1, n) for m in moved]
    flat = [x.reshape(-1) for x in rows]

    def less(a: Array, b: Array) -> Array:
        if not a.size:
            return np.zeros(0, bool)
        pairs = []
        for k, x in enumerate(flat):
            if k in compared:
                pairs.extend([x.take(a), x.take(b)])
            else:
                unread = np.broadcast_to(x[:1], a.shape)
                pairs.extend([unread, unread])
        return np.asarray(comparator(pairs)).astype(bool, copy=False)

    if is_stable:
        order = std_stable_sort_order(len(rows[0]), n, less, _guess(flat, compared, less))
    else:
        order = std_sort_order(len(rows[0]), n, less)
    return [np.moveaxis(np.take_along_axis(x, order, axis=1).reshape(shape), -1, axis)
            for x in rows]


def _guess(flat: list[Array], compared: frozenset[int], less: Less) -> tuple[Array, Array]:
    """A hint for std_stable_sort (per element as the comparator's first and as its second
    argument): the first compared operand's order (_operand_guess), its ties broken by
    each further compared operand in turn, ascending or descending as the comparator
    orders two elements tied so far that differ in it."""
    size = flat[0].size
    if not compared or not size:
        zeros = np.zeros(size, np.int64)
        return zeros, zeros
    operands = sorted(compared)
    first, second = _operand_guess(flat[operands[0]], less)
    for k in operands[1:]:
        rank = _dense_rank(flat[k])
        order = np.lexsort((rank, first))
        a, b = order[:-1], order[1:]
        tied = np.flatnonzero((first[a] == first[b]) & (rank[a] != rank[b]))
        if not tied.size:
            continue
        lo, hi = int(a[tied[0]]), int(b[tied[0]])
        if _before(less, hi, lo) and not _before(less, lo, hi):
            rank = -rank
        elif not _before(less, lo, hi):
            continue  # the comparator does not order those ties by this operand
        first, second = _lexicographic(first, rank), _lexicographic(second, rank)
    return first, second


def _dense_rank(x: Array) -> Array:
    key = total_order_key(x) if x.dtype.kind in "fV" else x
    return np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _lexicographic(major: Array, minor: Array) -> Array:
    width = int(minor.max()) - int(minor.min()) + 1
    combined = (major - int(major.min())) * width + (minor - int(minor.min()))
    return np.unique(combined, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _before(less: Less, a: int, b: int) -> bool:
    return bool(less(np.array([a]), np.array([b]))[0])


def _operand_guess(x: Array, less: Less) -> tuple[Array, Array]:
    """Dense ranks of `x` in float total order, reversed when the comparator puts the
    largest value first; then fitted to the comparator on the values where comparisons
    often disagree with that order: -0 ranks with +0 when the comparator ties them, and
    NaN (each sign) ranks first or last as the comparator's first and as its second
    argument, as it compares with the least and the greatest other value."""
    floating = x.dtype.kind in "fV"
    values = x.astype(np.float64) if floating else x
    rank = _dense_rank(x)

    def before(a: int, b: int) -> bool:
        return _before(less, a, b)

    ordinary = np.flatnonzero(~np.isnan(values)) if floating else np.arange(x.size)
    if not ordinary.size:
        return rank, rank
    lo, hi = (int(ordinary[k]) for k in (np.argmin(rank[ordinary]), np.argmax(rank[ordinary])))
    if before(hi, lo) and not before(lo, hi):
        rank, lo, hi = -rank, hi, lo
    if not floating:
        return rank, rank
    first, second = rank.copy(), rank.copy()
    zero = values == 0
    negative_zero = zero & np.signbit(values)
    positive_zero = np.flatnonzero(zero & ~negative_zero)
    if negative_zero.any() and positive_zero.size:
        z_neg, z_pos = int(np.argmax(negative_zero)), int(positive_zero[0])
        if not before(z_neg, z_pos) and not before(z_pos, z_neg):
            first[negative_zero] = second[negative_zero] = rank[z_pos]
    low, high = int(rank[lo]) - 1, int(rank[hi]) + 1
    for nan in (np.isnan(values) & np.signbit(values), np.isnan(values) & ~np.signbit(values)):
        if not nan.any():
            continue
        z = int(np.argmax(nan))
        first[nan] = low if before(z, lo) else high if not before(z, hi) else first[z]
        second[nan] = high if before(hi, z) else low if not before(lo, z) else second[z]
    return first, second
