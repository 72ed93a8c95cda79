"""sort for the vectorized interpreter: any comparator, stable, vectorized over rows.

Contract: `sort_values(xs, dim, less)` sorts the arrays `xs` (each (B, *dims), sorted
together by the first ones' order as the comparator sees them) along HLO dimension `dim`.
`less(lhs, rhs)` evaluates the comparator on flat lanes: it receives
[lhs_0, rhs_0, lhs_1, rhs_1, ...] (XLA's parameter order) and returns the pred lanes of
"lhs sorts before rhs". The algorithm is odd-even transposition sort: it swaps two
neighbours only when the right one sorts strictly before the left one, so equal elements
keep their order (the result is stable, which satisfies is_stable=true and false alike),
and it needs at most n passes of one comparator call each over every row at once.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

Array = np.ndarray
Less = Callable[[list[Array]], Array]


def sort_values(xs: list[Array], dim: int, less: Less) -> list[Array]:
    axis = 1 + dim
    moved = [np.moveaxis(x, axis, -1) for x in xs]
    shape = moved[0].shape
    length = shape[-1]
    rows = [np.array(m.reshape(-1, length)) for m in moved]
    unchanged_passes = 0
    for step in range(length):
        left = np.arange(step % 2, length - 1, 2)
        if left.size == 0:
            continue
        right = left + 1
        args = []
        for r in rows:
            args.extend([r[:, right].reshape(-1), r[:, left].reshape(-1)])
        swap = np.asarray(less(args)).astype(bool).reshape(rows[0].shape[0], left.size)
        if not swap.any():
            unchanged_passes += 1
            if unchanged_passes == 2:  # both neighbour parities in order: sorted
                break
            continue
        unchanged_passes = 0
        for r in rows:
            a, b = r[:, left], r[:, right]
            r[:, left] = np.where(swap, b, a)
            r[:, right] = np.where(swap, a, b)
    return [np.moveaxis(r.reshape(shape), -1, axis) for r in rows]
