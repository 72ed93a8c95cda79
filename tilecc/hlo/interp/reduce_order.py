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
- a reduce-window folds each window from the init value (once per output, one element
  included), skipping padding and base-dilation holes (interp.reduce_window), row-major
  over the window axes except that the last axis with a window of 2 and positive padding
  goes outermost (`window_axis_order`; measured with f32 sums, which round differently
  in every other order); more than SEQUENTIAL_LIMIT window positions combine by doubling
  along each axis;
- except a scan: a reduce-window whose one non-trivial window axis has the operand's
  length N > SCAN_BASE_LENGTH as its size, stride 1, no dilation and padding N - 1 or N
  on one side only (inclusive / exclusive, forward / reverse) goes through XLA's
  ReduceWindowRewriter first (xla/hlo/transforms/simplifiers/reduce_window_rewriter.cc):
  the axis, padded at its end with the init to a multiple of the base length, is cut into
  rows of that length, each row is scanned from the init, the rows' totals are scanned
  exclusively (rewritten again when longer than the base), and each element is
  combine(its row's scan, that exclusive scan). A non-identity init therefore counts
  2 + r times in row r of a 40-long add scan (measured: 2, 3, 4).
Contract: `generic_reduce(xs, inits, axes, combine)` is XLA reduce with any reducer: xs are
(B, *dims), inits (B,), axes count from 1. `fold_reduce(columns, inits, sizes, combine,
tree_window)` reduces the (M, K) `columns` (K = prod(sizes) elements of each of M rows,
row-major over the reduced axes of sizes `sizes`) from the (M,) `inits` in that order
(`tree_window`: the rewriter's window, for a single-output reduce; None folds in order). A
fold longer than SEQUENTIAL_LIMIT elements combines neighbours pairwise instead
(reduce.tree_reduce: log2(K) vectorized calls rather than K), which is XLA CPU's result for
every associative reducer (jax's argmax is one, NaN included).
"""

from __future__ import annotations

import numpy as np

from tilecc.hlo.interp.reduce import TREE_REDUCTION_WINDOW, tree_reduce
from tilecc.hlo.interp.values import Array, LaneCombiner

SEQUENTIAL_LIMIT = 1 << 14
"""Folds of at most this many elements (reduce) or window positions (reduce-window) go one
after another (XLA CPU's order); longer ones pair neighbours (see the module docstring)."""


SCAN_BASE_LENGTH = 16
"""ReduceWindowRewriter's base length on XLA CPU (measured on jaxlib 0.10.2: an add scan of
16 elements from init 1 counts the init once per element, one of 17 twice)."""


def window_axis_order(sizes: tuple[int, ...], pads: tuple[tuple[int, int], ...]
                      ) -> tuple[int, ...]:
    """The window axes of a reduce-window, outermost loop first (see the module docstring):
    on a (5, 6, 7) operand with 2x2x2 windows, padding 1_0 on axis 2 gives (2, 0, 1),
    padding on axes 1 and 2 too; a 3x2x3 window padded on axes 1 and 2 gives (1, 0, 2);
    a window of 3 on the padded axis keeps (0, 1, 2)."""
    rank = len(sizes)
    moved = [axis for axis in range(rank) if sizes[axis] == 2 and max(pads[axis]) > 0]
    if not moved:
        return tuple(range(rank))
    return (moved[-1],) + tuple(axis for axis in range(rank) if axis != moved[-1])


def generic_reduce(xs: list[Array], inits: list[Array], axes: tuple[int, ...],
                   combine: LaneCombiner) -> list[Array]:
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
