"""sort for the vectorized interpreter: XLA CPU's order, equal elements included.

Contract: `sort_values(xs, dim, comparator, is_stable)` sorts the arrays `xs` (each
(B, *dims), sorted together) along HLO dimension `dim` into the order XLA CPU gives.
`comparator(pairs)` evaluates the sort's computation on flat lanes: it receives
[lhs_0, rhs_0, lhs_1, rhs_1, ...] (XLA's parameter order) and returns the pred lanes of
"lhs sorts before rhs".

What XLA CPU does (xla/backends/cpu/runtime/sort_thunk.cc, xla/service/
stable_sort_expander.cc): every 1-D slice along the sort dimension is sorted on its own
with libstdc++'s std::sort and the compiled comparator (a single operand with a plain
LT / GT comparator uses std::less / std::greater instead: the same comparisons). A sort
with is_stable=true never reaches std::stable_sort: StableSortExpander first rewrites its
comparator to select(c(a, b) == c(b, a), iota_a < iota_b, c(a, b)) over an S32 iota of the
sort dimension (an operand that already is one, else a new one: the same values, the
element's original position). So both flavours are std::sort, replayed by std_sort; the
stable one with that rewritten comparator, which for a strict weak ordering is the stable
order and for others (NaN under LT) is what XLA computes.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecc.hlo.interp.std_sort import std_sort_order

Array = np.ndarray
Comparator = Callable[[list[Array]], Array]


def sort_values(xs: list[Array], dim: int, comparator: Comparator,
                is_stable: bool) -> list[Array]:
    axis = 1 + dim
    moved = [np.moveaxis(x, axis, -1) for x in xs]
    shape = moved[0].shape
    n = shape[-1]
    rows = [np.ascontiguousarray(m).reshape(-1, n) for m in moved]

    def plain(r: Array, a: Array, b: Array) -> Array:
        pairs = []
        for x in rows:
            pairs.extend([x[r, a], x[r, b]])
        return np.asarray(comparator(pairs)).astype(bool, copy=False)

    def stabilized(r: Array, a: Array, b: Array) -> Array:
        both = plain(np.concatenate([r, r]), np.concatenate([a, b]), np.concatenate([b, a]))
        forward, backward = both[:r.size], both[r.size:]
        return np.where(forward == backward, a < b, forward)

    less = stabilized if is_stable else plain
    order = std_sort_order(rows[0].shape[0], n, lambda r, a, b: less(r, a, b)
                           if r.size else np.zeros(0, bool))
    return [np.moveaxis(np.take_along_axis(x, order, axis=1).reshape(shape), -1, axis)
            for x in rows]
