"""libstdc++'s std::stable_sort replayed on many rows at once: XLA CPU's is_stable order.

Contract: `std_stable_sort_order(rows, n, less)` returns the (rows, n) int64 array whose
row r holds the original positions of row r's elements after libstdc++'s
std::stable_sort(first, first + n, comp), comp(a, b) = `less(a, b)` (the `less` of
std_sort: lanes of element ids row * n + position, a pure function). For a strict
weak ordering that is the one stable order; for other comparators (NaN under LT) it is
the order this merge sort's particular comparisons produce, which is what XLA computes.

The algorithm replayed (libstdc++ with its temporary buffer of (n + 1) / 2 elements
granted, __stable_sort_adaptive): each half [0, h) and [h, n), h = (n + 1) / 2, is sorted
by __merge_sort_with_buffer -- chunks of 7 (_S_chunk_size) by guarded insertion sort,
then passes merging neighbouring runs of 7, 14, 28, ... while the run is shorter than the
half; a merge takes the second run's head when comp(second, first) holds, else the
first's. Then the halves are merged: forward as above when h == n - h, else backward
from the ends (the first half's tail when comp(second's tail, first's tail) holds).

Invariants: every chunk of a pass and every merge of a pass is independent of the others,
so each runs for all rows at once. A merge is resolved in closed form: each "trigger"
element (the one a true comparison emits) finds by binary search how many of the other
run go before it; then the comparisons the two-pointer merge would make along that path
are evaluated, and merges where one disagrees (the comparator is not a strict weak
ordering there) are replayed two-pointer step by step.
"""

from __future__ import annotations

import numpy as np

from tilecc.hlo.interp.std_sort import Array, Less, segment_starts

CHUNK = 7  # libstdc++'s _S_chunk_size


def std_stable_sort_order(rows: int, n: int, less: Less) -> Array:
    perm = np.arange(rows * n, dtype=np.int64).reshape(rows, n)
    if n < 2 or rows == 0:
        return perm - np.arange(rows)[:, None] * n
    half = (n + 1) // 2
    halves = [(0, half), (half, n)]
    chunks = [(lo + k, min(lo + k + CHUNK, hi)) for lo, hi in halves
              for k in range(0, hi - lo, CHUNK)]
    _insertion_sort_chunks(perm, chunks, less)
    step = CHUNK
    while step < half:
        merges = [(lo + k, min(lo + k + step, hi), min(lo + k + 2 * step, hi))
                  for lo, hi in halves for k in range(0, hi - lo, 2 * step)]
        _merge(perm, [m for m in merges if m[1] < m[2]], less, backward=False)
        step *= 2
    _merge(perm, [(0, half, n)], less, backward=half != n - half)
    return perm - np.arange(rows)[:, None] * n


def _insertion_sort_chunks(perm: Array, chunks: list[tuple[int, int]], less: Less) -> None:
    """__insertion_sort on every chunk of every row: an element that sorts before the
    chunk's first moves to the front at once, others insert linearly from the right."""
    rows = perm.shape[0]
    first = np.array([c[0] for c in chunks], np.int64)
    length = np.array([c[1] - c[0] for c in chunks], np.int64)
    for t in range(1, int(length.max())):
        k = np.flatnonzero(length > t)
        r = np.repeat(np.arange(rows), k.size)
        f = np.tile(first[k], rows)
        val = perm[r, f + t]
        front = less(val, perm[r, f])
        fr, ff = r[front], f[front]
        for s in range(t, 0, -1):  # shift the whole chunk prefix right by one
            perm[fr, ff + s] = perm[fr, ff + s - 1]
        j = f + t
        j[front] = f[front]
        moving = ~front
        while True:
            idx = np.flatnonzero(moving)
            if not idx.size:
                break
            step = less(val[idx], perm[r[idx], j[idx] - 1])
            go = idx[step]
            moving[idx[~step]] = False
            perm[r[go], j[go]] = perm[r[go], j[go] - 1]
            j[go] -= 1
        perm[r, j] = val


def _merge(perm: Array, merges: list[tuple[int, int, int]], less: Less,
           backward: bool) -> None:
    """Merge [s, m) with [m, e) for every (s, m, e) of `merges` in every row."""
    if not merges:
        return
    rows = perm.shape[0]
    spec = np.array(merges, np.int64)
    s = np.tile(spec[:, 0], rows)
    m = np.tile(spec[:, 1], rows)
    e = np.tile(spec[:, 2], rows)
    r = np.repeat(np.arange(rows), len(merges))
    # triggers: the run a true comparison emits (the second forward, the first backward);
    # both runs are read from the end backward, so the merge is forward in that order
    if backward:
        t_pos, t_len = _run_positions(m - 1, m - s, -1)
        o_pos, o_len = _run_positions(e - 1, e - m, -1)
    else:
        t_pos, t_len = _run_positions(m, e - m, 1)
        o_pos, o_len = _run_positions(s, m - s, 1)
    t_seg = np.repeat(np.arange(r.size), t_len)
    o_start = segment_starts(o_len)
    t_ids = perm[r[t_seg], t_pos]
    o_all = perm[np.repeat(r, o_len), o_pos]

    def comp(seg: Array, trigger: Array, other_index: Array) -> Array:
        other = o_all[o_start[seg] + other_index]
        return less(other, trigger) if backward else less(trigger, other)

    before = _others_before(t_seg, t_ids, o_len, comp)
    # output order: trigger j after `before[j]` others; others after the triggers before
    t_rank = np.arange(t_seg.size) - segment_starts(t_len)[t_seg]
    t_out = before + t_rank
    o_seg = np.repeat(np.arange(r.size), o_len)
    o_rank = np.arange(o_seg.size) - o_start[o_seg]
    # number of triggers with before <= i, per other element i of the same merge (the
    # keys are sorted: `before` never decreases along a merge)
    key_t = t_seg * (int(o_len.max()) + 2) + before
    key_o = o_seg * (int(o_len.max()) + 2) + o_rank
    o_out = o_rank + np.searchsorted(key_t, key_o, side="right") \
        - segment_starts(t_len)[o_seg]
    start = e - 1 if backward else s
    sign = -1 if backward else 1
    t_rows, o_rows = r[t_seg], r[o_seg]
    t_dst = start[t_seg] + sign * t_out
    o_dst = start[o_seg] + sign * o_out
    perm[t_rows, t_dst] = t_ids
    perm[o_rows, o_dst] = o_all


def _run_positions(start: Array, length: Array, sign: int) -> tuple[Array, Array]:
    seg = np.repeat(np.arange(start.size), length)
    offset = np.arange(seg.size) - segment_starts(length)[seg]
    return start[seg] + sign * offset, length


def _others_before(t_seg: Array, t_ids: Array, o_len: Array, comp) -> Array:
    """Per trigger j of merge g: the first index i >= that of trigger j - 1 with
    comp(trigger j, other i), else the other run's length (the two-pointer merge)."""
    lo = np.zeros(t_seg.size, np.int64)
    hi = o_len[t_seg].copy()
    while True:
        idx = np.flatnonzero(lo < hi)
        if not idx.size:
            break
        mid = (lo[idx] + hi[idx]) // 2
        c = comp(t_seg[idx], t_ids[idx], mid)
        hi[idx[c]] = mid[c]
        lo[idx[~c]] = mid[~c] + 1
    # monotone along each merge (a no-op for a strict weak ordering)
    width = int(o_len.max()) + 1
    guess = np.maximum.accumulate(lo + t_seg * width) - t_seg * width
    # the comparisons the two-pointer merge makes along that path
    t_start = segment_starts(np.bincount(t_seg, minlength=o_len.size))
    prev = np.concatenate([[0], guess[:-1]])
    prev[t_start[np.bincount(t_seg, minlength=o_len.size) > 0]] = 0
    last = np.minimum(guess, o_len[t_seg] - 1)
    cells = np.maximum(last - prev + 1, 0)
    cell_t = np.repeat(np.arange(t_seg.size), cells)
    cell_i = np.arange(cell_t.size) - segment_starts(cells)[cell_t] + prev[cell_t]
    got = comp(t_seg[cell_t], t_ids[cell_t], cell_i)
    wrong = got != (cell_i == guess[cell_t])
    bad = np.unique(t_seg[cell_t[wrong]])
    if bad.size:
        _two_pointer(guess, t_seg, t_ids, o_len, bad, t_start, comp)
    return guess


def _two_pointer(before: Array, t_seg: Array, t_ids: Array, o_len: Array, bad: Array,
                 t_start: Array, comp) -> None:
    """The merges `bad` replayed step by step, all at once; their `before` rewritten."""
    t_count = np.bincount(t_seg, minlength=o_len.size)[bad]
    i = np.zeros(bad.size, np.int64)
    j = np.zeros(bad.size, np.int64)
    while True:
        idx = np.flatnonzero((i < o_len[bad]) & (j < t_count))
        if not idx.size:
            break
        t = t_start[bad[idx]] + j[idx]
        c = comp(bad[idx], t_ids[t], i[idx])
        before[t[c]] = i[idx[c]]
        j[idx[c]] += 1
        i[idx[~c]] += 1
    rest = np.repeat(np.arange(bad.size), np.maximum(t_count - j, 0))
    offset = np.arange(rest.size) - segment_starts(np.maximum(t_count - j, 0))[rest]
    before[t_start[bad[rest]] + j[rest] + offset] = i[rest]
