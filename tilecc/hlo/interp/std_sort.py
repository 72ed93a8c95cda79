"""libstdc++'s std::sort replayed on many rows at once: the order XLA CPU's sort gives.

Contract: `std_sort_order(rows, n, less)` returns the (rows, n) int64 array whose row r
holds, left to right, the original positions of row r's elements after libstdc++'s
std::sort(first, first + n, comp) -- with comp(a, b) = `less(a, b)`, where `less` takes
equal-length arrays of element ids (id = row * n + original position) and returns the
comparator's pred for "element a sorts before element b" of each lane. `less` must be a
pure function of its lanes (it is called on more pairs than std::sort compares, never with
another result). A comparator that makes std::sort read outside the row (not irreflexive
enough for its unguarded loops to stop) is refused with an InterpError.

The algorithm replayed (libstdc++, facts from its documentation and behaviour):
- introsort loop with depth limit 2 * floor(log2 n) while a range holds more than 16
  (_S_threshold) elements: median of (first + 1, first + len / 2, last - 1) swapped to
  first (__move_median_to_first), then an unguarded Hoare partition of [first + 1, last)
  around *first; the right part is sorted first, then the loop continues on the left; at
  depth 0 the range is heap sorted (make_heap then sort_heap);
- then the final insertion sort: guarded on the first 16 elements (an element that sorts
  before *first moves to the front at once), unguarded linear insertion on the rest.

Invariants: the ranges of one level are disjoint, so every range of every row is
partitioned at once (one `less` call on all their elements against their pivots); the
two-pointer scan of a partition is resolved from those flags in closed form (the k-th
left stop swaps with the k-th right stop while it lies left of it). The final insertion
sort runs per leaf range (every leaf at once) and is exact when no element of a leaf sorts
before the last element of the leaf to its left (always so for a strict weak ordering);
rows where one does are replayed element by element across the whole row.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecc.errors import InterpError

Array = np.ndarray
Less = Callable[[Array, Array], Array]
"""less(a, b): per lane, whether element a sorts before element b (ids: row * n + position)."""

THRESHOLD = 16  # libstdc++'s _S_threshold
OUT_OF_ROW = ("sort: the comparator is not a strict weak ordering and std::sort would read "
              "outside the row (XLA CPU's result is undefined)")


def std_sort_order(rows: int, n: int, less: Less) -> Array:
    perm = np.arange(rows * n, dtype=np.int64).reshape(rows, n)
    if n < 2 or rows == 0:
        return perm - np.arange(rows)[:, None] * n
    flat = perm.reshape(-1)
    # ranges as flat [first, last) positions with their remaining depth
    first = np.arange(rows, dtype=np.int64) * n
    last, depth = first + n, np.full(rows, 2 * (n.bit_length() - 1), np.int64)
    leaves: list[tuple[Array, Array]] = []
    while first.size:
        big = last - first > THRESHOLD
        heap = big & (depth == 0)
        for k in np.flatnonzero(heap):
            _heap_sort(flat, int(first[k]), int(last[k]), less)
        done = ~big | heap
        leaves.append((first[done], last[done]))
        go = ~done
        first, last, depth = first[go], last[go], depth[go] - 1
        _median_to_first(flat, first, last, less)
        cut = _partition(flat, first, last, less)
        first, last = np.concatenate([first, cut]), np.concatenate([cut, last])
        depth = np.concatenate([depth, depth])
    leaf_first = np.concatenate([leaf[0] for leaf in leaves])
    leaf_last = np.concatenate([leaf[1] for leaf in leaves])
    r = leaf_first // n
    _final_insertion_sort(perm, n, (r, leaf_first - r * n, leaf_last - r * n), less)
    return perm - np.arange(rows)[:, None] * n


def _median_to_first(flat: Array, first: Array, last: Array, less: Less) -> None:
    if not first.size:
        return
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    pa, pb, pc = flat[a], flat[b], flat[c]
    m = first.size
    flags = less(np.concatenate([pa, pb, pa]), np.concatenate([pb, pc, pc]))
    ab, bc, ac = flags[:m], flags[m:2 * m], flags[2 * m:]
    # __move_median_to_first's decision tree
    choice = np.where(ab, np.where(bc, b, np.where(ac, c, a)),
                      np.where(ac, a, np.where(bc, c, b)))
    head, chosen = flat[first], flat[choice]
    flat[first], flat[choice] = chosen, head


def segment_starts(counts: Array) -> Array:
    starts = np.zeros(counts.size, np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return starts


def _partition(flat: Array, first: Array, last: Array, less: Less) -> Array:
    """__unguarded_partition(first + 1, last, pivot = first) of every range; the cuts."""
    if not first.size:
        return first
    counts = last - first - 1
    starts = segment_starts(counts)
    ends = starts + counts - 1
    pos = np.repeat(first + 1 - starts, counts) + np.arange(int(counts.sum()))
    ids = flat[pos]
    pivots = np.repeat(flat[first], counts)
    left_stop, right_stop = ~less(ids, pivots), ~less(pivots, ids)
    # a left stop's rank from the left; the right stops after a position (both per range)
    left_cum = np.cumsum(left_stop)
    left_rank = left_cum - np.repeat(left_cum[starts] - left_stop[starts], counts)
    right_cum = np.cumsum(right_stop)
    right_after = np.repeat(right_cum[ends], counts) - right_cum
    # the k-th left stop swaps with the k-th right stop while it lies left of it
    swaps_left = left_stop & (right_after >= left_rank)
    swaps_cum = np.cumsum(swaps_left)
    swaps = swaps_cum[ends] - swaps_cum[starts] + swaps_left[starts]
    swaps_right = right_stop & (right_after < np.repeat(swaps, counts))
    pair_left = pos[swaps_left]
    right_at = np.flatnonzero(swaps_right)  # each range's pairs from the right: reverse
    base = segment_starts(swaps)
    pair_seg = np.repeat(np.arange(first.size), swaps)
    pair_right = pos[right_at[2 * base[pair_seg] + swaps[pair_seg] - 1 -
                              np.arange(pair_seg.size)]]
    held = flat[pair_left]
    flat[pair_left] = flat[pair_right]
    flat[pair_right] = held
    # the scan stops at the next left stop, or at the last swapped right position
    rest = np.flatnonzero(left_stop & ~swaps_left)
    at = np.searchsorted(rest, starts)
    has_next = at < rest.size
    has_next[has_next] = rest[at[has_next]] <= ends[has_next]
    next_left = np.where(has_next, pos[rest[np.minimum(at, max(rest.size - 1, 0))]]
                         if rest.size else last, last)
    if np.any((swaps == 0) & ~has_next):
        raise InterpError(OUT_OF_ROW)
    last_right = last.copy()
    swapped = swaps > 0
    last_right[swapped] = pos[right_at[base[swapped]]]
    return np.minimum(next_left, last_right)


def _heap_sort(flat: Array, first: int, last: int, less: Less) -> None:
    """std::partial_sort(first, last, last): __make_heap, then __sort_heap."""
    a = flat[first:last].copy()

    def comp(x: int, y: int) -> bool:
        return bool(less(np.array([x]), np.array([y]))[0])

    def adjust(hole: int, length: int, value: int) -> None:  # __adjust_heap
        top = hole
        child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if comp(int(a[child]), int(a[child - 1])):
                child -= 1
            a[hole] = a[child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[hole] = a[child - 1]
            hole = child - 1
        parent = (hole - 1) // 2  # __push_heap
        while hole > top and comp(int(a[parent]), value):
            a[hole] = a[parent]
            hole = parent
            parent = (hole - 1) // 2
        a[hole] = value

    length = last - first
    for parent in range((length - 2) // 2, -1, -1):
        adjust(parent, length, int(a[parent]))
    for end in range(length - 1, 0, -1):  # __pop_heap into position `end`
        value = int(a[end])
        a[end] = a[0]
        adjust(0, end, value)
    flat[first:last] = a


def _final_insertion_sort(perm: Array, n: int, leaves: tuple[Array, Array, Array],
                          less: Less) -> None:
    """`leaves`: (row, first, last) of the ranges the introsort loop left."""
    r, f, last = leaves
    rows = perm.shape[0]
    # the rows' heads: every leaf that reaches into the guarded first 16 positions
    reaching = f < THRESHOLD
    head_end = np.zeros(rows, np.int64)
    np.maximum.at(head_end, r[reaching], last[reaching])
    all_rows = np.arange(rows)
    _insert_rows(perm, all_rows, np.ones(rows, np.int64), head_end, less)
    tail = f >= head_end[r]
    r, f, last = r[tail], f[tail], last[tail]
    if not r.size:
        return
    before = perm.copy()
    reached_row, reached_id, reached_at = _insert_leaves(perm, r, f, last, less)
    crossing = less(reached_id, perm[reached_row, reached_at - 1])
    redo = np.unique(reached_row[crossing])
    if redo.size:
        perm[redo] = before[redo]
        _insert_rows(perm, redo, head_end[redo], np.full(redo.size, n, np.int64), less)


def _insert_leaves(perm: Array, r: Array, f: Array, last: Array,
                   less: Less) -> tuple[Array, Array, Array]:
    """Insertion sort inside every leaf at once; the (row, element, leaf start) of every
    element whose insertion reached its leaf's start (the global sort compares it with
    the element left of the leaf next)."""
    reached = [(r, perm[r, f], f)]
    length = last - f
    for t in range(1, int(length.max())):
        k = np.flatnonzero(length > t)
        rows, start = r[k], f[k]
        val = perm[rows, start + t]
        j = start + t
        moving = np.ones(k.size, bool)
        while True:
            idx = np.flatnonzero(moving & (j > start))
            if not idx.size:
                break
            step = less(val[idx], perm[rows[idx], j[idx] - 1])
            go = idx[step]
            moving[idx[~step]] = False
            perm[rows[go], j[go]] = perm[rows[go], j[go] - 1]
            j[go] -= 1
        perm[rows, j] = val
        at = j == start
        reached.append((rows[at], val[at], start[at]))
    return tuple(np.concatenate([x[i] for x in reached]) for i in range(3))  # type: ignore


def _insert_rows(perm: Array, rows: Array, lo: Array, hi: Array, less: Less) -> None:
    """Positions [lo, hi) of each row inserted one by one, rows in lockstep: guarded
    (__insertion_sort) below position 16, unguarded linear insertion from there."""
    for i in range(int(lo.min()), int(hi.max())):
        k = np.flatnonzero((lo <= i) & (i < hi))
        if not k.size:
            continue
        rk = rows[k]
        val = perm[rk, i].copy()
        j = np.full(k.size, i, np.int64)
        moving = np.ones(k.size, bool)
        if i < THRESHOLD:
            front = less(val, perm[rk, 0])
            fr = rk[front]
            perm[fr, 1:i + 1] = perm[fr, 0:i]
            j[front] = 0
            moving[front] = False
        while True:
            idx = np.flatnonzero(moving)
            if not idx.size:
                break
            if np.any(j[idx] == 0):
                raise InterpError(OUT_OF_ROW)
            step = less(val[idx], perm[rk[idx], j[idx] - 1])
            go = idx[step]
            moving[idx[~step]] = False
            perm[rk[go], j[go]] = perm[rk[go], j[go] - 1]
            j[go] -= 1
        perm[rk, j] = val
