"""The order in which XLA CPU combines the elements of a reduce whose reducer is a
computation, so reducers that are not associative on every input agree with it.

Measured on jaxlib 0.10.2 with `select(a > b, a, b)` and its argmax form (both keep the
right operand when a NaN is compared, so the result depends on the order):
- a reduce of one element (every reduced axis of size 1) is that element: XLA CPU rewrites
  it to a reshape and the init value is not used (variadic reduces too);
- a single-output reduce goes through TreeReductionRewriter first: while a reduced axis is
  longer than its window (32), every window of min(size, 32) elements along each reduced
  axis (SAME padding: the padded positions are skipped, not combined) folds row-major from
  the init value, and the partial results are reduced the same way;
- a variadic reduce (argmax) is not rewritten: its elements fold row-major, one after
  another from the init value, whatever the length;
- a reduce-window folds each window row-major from the init value.
Contract: `generic_reduce(xs, inits, axes, combine, windows=False)` is XLA reduce with any
reducer (with `windows`, reduce-window on a window view: every window folds from the init,
one element included): xs are (B, *dims), inits (B,), axes count from 1. `fold_reduce(columns, inits, sizes, combine, tree_window)` reduces the (M, K)
`columns` (K = prod(sizes) elements of each of M rows, row-major over the reduced axes of
sizes `sizes`) from the (M,) `inits` in that order (`tree_window`: the rewriter's window, for
a single-output reduce; None folds in order). A fold longer than SEQUENTIAL_LIMIT elements
combines neighbours pairwise instead (reduce.tree_reduce: log2(K) vectorized calls rather
than K), which is XLA CPU's result for every associative reducer (jax's argmax is one,
NaN included).
"""

from __future__ import annotations

import numpy as np

from tilecc.hlo.interp.reduce import TREE_REDUCTION_WINDOW, tree_reduce
from tilecc.hlo.interp.values import Array, LaneCombiner

SEQUENTIAL_LIMIT = 1 << 14
"""Folds of at most this many elements go one element after another (XLA CPU's order);
longer ones pair neighbours (see the module docstring)."""


def generic_reduce(xs: list[Array], inits: list[Array], axes: tuple[int, ...],
                   combine: LaneCombiner, windows: bool = False) -> list[Array]:
    """See the module contract."""
    lanes = xs[0].shape[0]
    kept_axes = [a for a in range(1, xs[0].ndim) if a not in axes]
    kept = tuple(xs[0].shape[a] for a in kept_axes)
    sizes = tuple(xs[0].shape[a] for a in axes)
    count = int(np.prod(sizes, dtype=np.int64))
    rows = lanes * int(np.prod(kept, dtype=np.int64))
    init_rows = [np.repeat(init, rows // lanes) if lanes else init for init in inits]
    if count == 0:
        results = init_rows
    else:
        columns = [np.transpose(x, [0] + kept_axes + list(axes)).reshape(rows, count)
                   for x in xs]
        if windows:
            results = _fold(columns, init_rows, combine)
        else:
            results = fold_reduce(columns, init_rows, sizes, combine,
                                  TREE_REDUCTION_WINDOW if len(xs) == 1 else None)
    return [r.reshape((lanes,) + kept) for r in results]


def fold_reduce(columns: list[Array], inits: list[Array], sizes: tuple[int, ...],
                combine: LaneCombiner, tree_window: int | None) -> list[Array]:
    """See the module contract; every size is >= 1."""
    if all(size == 1 for size in sizes):
        return [c[:, 0] for c in columns]
    if tree_window is None or all(size <= tree_window for size in sizes):
        return _fold(columns, inits, combine)
    rows = columns[0].shape[0]
    windows = [min(size, tree_window) for size in sizes]
    counts = [-(-size // window) for size, window in zip(sizes, windows)]
    lows = [(count * window - size) // 2
            for size, window, count in zip(sizes, windows, counts)]
    inside = np.ones((), bool)
    for axis, (size, window, count, low) in enumerate(zip(sizes, windows, counts, lows)):
        along = (np.arange(count * window) - low)
        valid = ((along >= 0) & (along < size)).reshape(count, window)
        inside = inside[..., None, None] & valid.reshape(
            (1,) * (2 * axis) + (count, window))
    rank = len(sizes)
    # (count_0, window_0, count_1, window_1, ...) -> (counts..., windows...)
    order = [2 * a for a in range(rank)] + [2 * a + 1 for a in range(rank)]
    partials = int(np.prod(counts))
    span = int(np.prod(windows))
    mask = inside.transpose(order).reshape(partials, span)
    blocks = []
    for column in columns:
        padded = np.zeros((rows,) + tuple(c * w for c, w in zip(counts, windows)),
                          column.dtype)
        padded[(slice(None),) + tuple(slice(low, low + size) for low, size in
                                      zip(lows, sizes))] = column.reshape((rows,) + sizes)
        split = padded.reshape((rows,) + tuple(n for pair in zip(counts, windows)
                                               for n in pair))
        blocks.append(split.transpose([0] + [1 + a for a in order])
                      .reshape(rows * partials, span))
    starts = [np.repeat(init, partials) for init in inits]
    lanes = np.tile(mask, (rows, 1))
    accs = starts
    for k in range(span):
        stepped = combine(accs, [b[:, k] for b in blocks])
        keep = lanes[:, k]
        accs = stepped if keep.all() else [np.where(keep, s, a) for s, a in zip(stepped, accs)]
    return fold_reduce([a.reshape(rows, partials) for a in accs], inits, tuple(counts),
                       combine, tree_window)


def _fold(columns: list[Array], inits: list[Array], combine: LaneCombiner) -> list[Array]:
    count = columns[0].shape[1]
    if count > SEQUENTIAL_LIMIT:
        return combine(inits, tree_reduce(columns, combine))
    results = inits
    for k in range(count):
        results = combine(results, [c[:, k] for c in columns])
    return results
