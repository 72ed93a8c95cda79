"""libstdc++'s std::stable_sort replayed on many rows at once: XLA CPU's is_stable order.

Contract: `std_stable_sort_order(rows, n, less, guess)` returns the (rows, n) int64 array
whose row r holds the original positions of row r's elements after libstdc++'s
std::stable_sort(first, first + n, comp), comp(a, b) = `less(a, b)` (the `less` of
std_sort: lanes of element ids row * n + position, a pure function). For a strict
weak ordering that is the one stable order; for other comparators (NaN under LT) it is
the order this merge sort's particular comparisons produce, which is what XLA computes.
`guess` is a hint only: two int64 arrays per element id, integers whose order is
expected to be the comparator's (equal where it ties) for the element as its first and as
its second argument (they differ for NaN under LT: never less as the first, never greater
as the second); any guess gives the same result, a good one gives it fast.

The algorithm replayed (libstdc++ with its temporary buffer of (n + 1) / 2 elements
granted, __stable_sort_adaptive): each half [0, h) and [h, n), h = (n + 1) / 2, is sorted
by __merge_sort_with_buffer -- chunks of 7 (_S_chunk_size) by guarded insertion sort,
then passes merging neighbouring runs of 7, 14, 28, ... while the run is shorter than the
half; a merge takes the second run's head when comp(second, first) holds, else the
first's. Then the halves are merged: forward as above when h == n - h, else backward
from the ends (the first half's tail when comp(second's tail, first's tail) holds).

Invariants: every chunk of a pass and every merge of a pass is independent of the others,
so each runs for all rows at once. A merge is resolved in closed form: each "trigger"
element (the one a true comparison emits) takes from `guess` how many of the other run go
before it; then the comparisons the two-pointer merge would make along that path are
evaluated, and merges where one disagrees (a poor guess, or a comparator that is no
strict weak ordering there) are traced through blocks of comparisons from there on.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecc.hlo.interp.std_sort import Array, Less, segment_starts

CHUNK = 7  # libstdc++'s _S_chunk_size
TRACE = 4  # the side of a block of comparisons _trace evaluates at once


def std_stable_sort_order(rows: int, n: int, less: Less,
                          guess: tuple[Array, Array]) -> Array:
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
        _merge(perm, [m for m in merges if m[1] < m[2]], less, guess, backward=False)
        step *= 2
    _merge(perm, [(0, half, n)], less, guess, backward=half != n - half)
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
           guess: tuple[Array, Array], backward: bool) -> None:
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

    def comp(trigger: Array, other: Array) -> Array:
        """comp of the two-pointer merge; `other`: indices into o_all."""
        ids = o_all.take(other)
        return less(ids, trigger) if backward else less(trigger, ids)

    # the guess: the others a trigger does not sort before (runs read backward: the
    # others it sorts before or ties); an other counts only once all before it in its run
    # do (the running maximum of its run's keys)
    first_arg, second_arg = guess
    low = min(int(first_arg.min()), int(second_arg.min()))
    width = max(int(first_arg.max()), int(second_arg.max())) - low + 2
    o_seg = np.repeat(np.arange(r.size), o_len)
    if backward:  # comp(other, trigger), keys reversed
        o_key, t_key = low - first_arg[o_all], low - second_arg[t_ids]
    else:
        o_key, t_key = second_arg[o_all] - low, first_arg[t_ids] - low
    o_key = np.maximum.accumulate(o_key + o_seg * (2 * width))
    t_key += t_seg * (2 * width)
    counted = np.searchsorted(o_key, t_key, side="right") - o_start[t_seg]
    before = _others_before(t_seg, t_ids, o_start, o_len, np.clip(counted, 0, o_len[t_seg]),
                            comp)
    # output order: trigger j after `before[j]` others; others after the triggers before
    t_rank = np.arange(t_seg.size) - segment_starts(t_len)[t_seg]
    t_out = before + t_rank
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


def _others_before(t_seg: Array, t_ids: Array, o_start: Array, o_len: Array,
                   guessed: Array, comp: Callable[[Array, Array], Array]) -> Array:
    """Per trigger j of merge g: the first index i >= that of trigger j - 1 with
    comp(trigger j, other i), else the other run's length: what the two-pointer merge
    computes. `guessed` is checked on the comparisons the merge makes along its path;
    merges where one disagrees are traced (_trace) from their first wrong trigger."""
    size = t_seg.size
    t_len = np.bincount(t_seg, minlength=o_len.size)
    t_first = segment_starts(t_len)
    limit = o_len[t_seg]
    base = o_start[t_seg]
    width = int(o_len.max()) + 1  # values never decrease along a merge
    value = np.maximum.accumulate(guessed + t_seg * width) - t_seg * width
    prev = np.concatenate([[0], value[:-1]])
    prev[t_first[t_len > 0]] = 0
    last = np.minimum(value, limit - 1)
    cells = np.maximum(last - prev + 1, 0)
    cell_t = np.repeat(np.arange(size), cells)
    cell_i = np.arange(cell_t.size) - segment_starts(cells)[cell_t] + prev[cell_t]
    got = comp(t_ids[cell_t], base[cell_t] + cell_i)
    wrong = every_wrong = np.unique(cell_t[got != (cell_i == value[cell_t])])
    if wrong.size:  # each bad merge from its first wrong trigger on (the ones before hold)
        wrong = wrong[np.r_[True, np.diff(t_seg[wrong]) != 0]]
        bad = t_seg[wrong]
        _trace(value, t_ids, t_first[bad], t_len[bad], o_start[bad], o_len[bad],
               prev[wrong], wrong - t_first[bad], comp, prev, every_wrong)
    return value


def _trace(value: Array, t_ids: Array, t_first: Array, t_len: Array, o_start: Array,
           o_len: Array, i0: Array, j0: Array, comp: Callable[[Array, Array], Array],
           guess_prev: Array, guess_wrong: Array) -> None:
    """The two-pointer merges given (their triggers from t_first, others from o_start)
    followed from the point (i0 others consumed, j0 triggers emitted) through blocks of
    TRACE x TRACE comparisons, one `comp` call per block for all merges; `value` of their
    triggers from j0 on rewritten. Where the path meets the guessed one again (trigger j
    next, guess_prev[j] others consumed), the guess holds up to the next trigger whose
    check failed (guess_wrong, sorted): the trace jumps there."""
    cols = np.arange(TRACE)
    jj, ii = np.divmod(np.arange(TRACE * TRACE), TRACE)
    while True:
        live = np.flatnonzero((i0 < o_len) & (j0 < t_len))
        if not live.size:
            break
        rows_t = j0[live, None] + jj  # (live, TRACE^2)
        cols_o = i0[live, None] + ii
        real = (rows_t < t_len[live, None]) & (cols_o < o_len[live, None])
        # an exhausted other run emits the trigger: a true cell
        cells = np.ones(real.shape, bool)
        cells[real] = comp(t_ids[(t_first[live, None] + rows_t)[real]],
                           (o_start[live, None] + cols_o)[real])
        block = cells.reshape(live.size, TRACE, TRACE)
        at = np.zeros(live.size, np.int64)  # the path's column in the block
        going = np.ones(live.size, bool)
        for row in range(TRACE):
            going &= j0[live] + row < t_len[live]
            hit = block[:, row, :] & (cols >= at[:, None])
            found = hit.any(axis=1)
            stop = going & ~found  # off the block's right edge: the next block
            i0[live[stop]] += TRACE
            j0[live[stop]] += row
            going &= found
            at = np.where(going, hit.argmax(axis=1), at)
            k = live[going]
            value[t_first[k] + j0[k] + row] = i0[k] + at[going]
            ended = going & (j0[live] + row + 1 == t_len[live])
            j0[live[ended]] = t_len[live[ended]]
            going &= ~ended
        k = live[going]  # through the block's bottom edge
        i0[k] += at[going]
        j0[k] += TRACE
        k = k[j0[k] < t_len[k]]
        met = k[guess_prev[t_first[k] + j0[k]] == i0[k]]
        if met.size:
            at_next = np.searchsorted(guess_wrong, t_first[met] + j0[met])
            nxt = guess_wrong[np.minimum(at_next, guess_wrong.size - 1)]
            inside = (at_next < guess_wrong.size) & (nxt < t_first[met] + t_len[met])
            j0[met[~inside]] = t_len[met[~inside]]
            jump = met[inside]
            j0[jump] = nxt[inside] - t_first[jump]
            i0[jump] = guess_prev[nxt[inside]]
    rest = np.flatnonzero(j0 < t_len)  # others exhausted: the triggers left go last
    count = t_len[rest] - j0[rest]
    seg = np.repeat(np.arange(rest.size), count)
    offset = np.arange(seg.size) - segment_starts(count)[seg]
    value[t_first[rest][seg] + j0[rest][seg] + offset] = o_len[rest][seg]
