"""Index expressions of NKI 1.x kernels: `nl.arange`, `nl.mgrid` grids and `mask=` clauses.

Contract: an IndexExpr is `offset + sum(step * k_axis)` over a grid of `sizes` (the grid of
nl.mgrid[...] or nl.arange(n)[:, None] / [None, :]); `+`, `-` with ints or other expressions
and `*` by ints stay affine, expressions of different grids broadcast like numpy
(`broadcast_grids`). Comparing an expression with an int gives a Mask: a mask that holds on the whole grid
changes nothing, one that keeps a leading part of an axis cuts the access or the tiles
(`mask_counts`), as NKI does for a partial last tile.
tilecc/nki/tensor.py turns expressions used as indices into access patterns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecc.nki.dtypes import plain_number
from tilecc.nki.errors import kernel_error


@dataclass(frozen=True, slots=True)
class IndexExpr:
    """offset + sum(step * k_axis) over a grid of `sizes` (from nl.arange / nl.mgrid)."""
    offset: int
    terms: tuple[tuple[int, int], ...]   # (grid axis, step)
    sizes: tuple[int, ...]

    def _shift(self, other: object, sign: int) -> IndexExpr:
        other = plain_number(other)
        if isinstance(other, int):
            return IndexExpr(self.offset + sign * other, self.terms, self.sizes)
        if isinstance(other, IndexExpr):
            steps = dict(self.terms)
            for axis, step in other.terms:
                steps[axis] = steps.get(axis, 0) + sign * step
            return IndexExpr(self.offset + sign * other.offset, tuple(sorted(steps.items())),
                             broadcast_grids([self.sizes, other.sizes]))
        return NotImplemented

    def __add__(self, other: object) -> IndexExpr:
        return self._shift(other, 1)

    __radd__ = __add__

    def __sub__(self, other: object) -> IndexExpr:
        return self._shift(other, -1)

    def __mul__(self, other: object) -> IndexExpr:
        other = plain_number(other)
        if not isinstance(other, int):
            return NotImplemented
        return IndexExpr(self.offset * other, tuple((a, s * other) for a, s in self.terms), self.sizes)

    __rmul__ = __mul__

    def __lt__(self, other: object) -> Mask:
        return Mask(((self, "<", other),))

    def __le__(self, other: object) -> Mask:
        return Mask(((self, "<=", other),))

    def __gt__(self, other: object) -> Mask:
        return Mask(((self, ">", other),))

    def __ge__(self, other: object) -> Mask:
        return Mask(((self, ">=", other),))

    def bounds(self) -> tuple[int, int]:
        """The smallest and largest value over the grid."""
        low = self.offset + sum(min(0, step * (self.sizes[a] - 1)) for a, step in self.terms)
        high = self.offset + sum(max(0, step * (self.sizes[a] - 1)) for a, step in self.terms)
        return low, high

    def __getitem__(self, key: object) -> IndexExpr:
        """arange(n)[:, None] -> grid axis 0 of 2; arange(n)[None, :] -> grid axis 1 of 2;
        in general one ':' among Nones puts the index on that axis of an N-d grid
        (nl.arange(n)[None, :, None] is axis 1 of 3)."""
        items = key if isinstance(key, tuple) else (key,)
        full = [i for i, item in enumerate(items) if item == slice(None)]
        if len(self.sizes) != 1 or len(full) != 1 or \
                any(item is not None for i, item in enumerate(items) if i != full[0]):
            raise kernel_error("an nl.arange index is reshaped with one ':' among Nones, as "
                               "[:, None] or [None, :]")
        axis = full[0]
        sizes = tuple(self.sizes[0] if i == axis else 1 for i in range(len(items)))
        return IndexExpr(self.offset, tuple((axis, s) for _, s in self.terms), sizes)


@dataclass(frozen=True, slots=True)
class Mask:
    """`mask=` of NKI 1.x calls: comparisons of grid indices with ints, joined by `&`.
    A mask that holds on the whole grid changes nothing; otherwise each clause must keep a
    leading part of one grid axis (`i * 128 + ix < n`), and the access or the tiles are cut
    to that many entries (`counts`): a partial last tile."""
    clauses: tuple[tuple[IndexExpr, str, object], ...]

    def __and__(self, other: object) -> Mask:
        if not isinstance(other, Mask):
            return NotImplemented
        return Mask(self.clauses + other.clauses)

    def counts(self, what: str) -> dict[int, int]:
        """grid axis -> how many leading entries the mask keeps (axes it does not cut omitted)."""
        kept: dict[int, int] = {}
        for expr, op, bound in self.clauses:
            bound = plain_number(bound)
            if isinstance(bound, bool) or not isinstance(bound, int):
                raise kernel_error(f"{what}: a mask compares an nl.arange / nl.mgrid index with an "
                                   f"int, got {bound!r}")
            low, high = expr.bounds()
            if {"<": high < bound, "<=": high <= bound, ">": low > bound, ">=": low >= bound}[op]:
                continue
            axis, count = _leading_count(expr, op, bound, what)
            if count <= 0:
                raise kernel_error(f"{what}: the mask (index {op} {bound}) excludes the whole tile "
                                   f"(index range [{low}, {high}])")
            kept[axis] = min(count, kept.get(axis, count))
        return kept


def _leading_count(expr: IndexExpr, op: str, bound: int, what: str) -> tuple[int, int]:
    """How many leading k of the one axis `expr` steps along satisfy `expr(k) op bound`."""
    steps = [(axis, step) for axis, step in expr.terms if step != 0 and expr.sizes[axis] > 1]
    upper = op in ("<", "<=")
    if len(steps) != 1 or (steps[0][1] > 0) != upper:
        raise kernel_error(f"{what}: tilecc supports masks that keep a leading part of one index "
                           f"axis (as `i * 128 + ix < n`), not (index {op} {bound})")
    (axis, step), size = steps[0], expr.sizes[steps[0][0]]
    if upper:   # offset + step * k < bound  (or <=)
        limit = bound - expr.offset
        count = -(-limit // step) if op == "<" else limit // step + 1
    else:       # offset + step * k > bound (or >=), step < 0
        limit = expr.offset - bound
        count = -(-limit // -step) if op == ">" else limit // -step + 1
    return axis, max(0, min(size, count))


def mask_counts(mask: object, what: str) -> dict[int, int]:
    """The cuts of `mask=` (None, or a Mask): grid axis -> leading entries kept."""
    if mask is None or (isinstance(mask, (bool, np.bool_)) and mask):
        return {}
    if isinstance(mask, (bool, np.bool_)):
        raise kernel_error(f"{what}: mask=False (the instruction is skipped) is not supported here")
    if not isinstance(mask, Mask):
        raise kernel_error(f"{what}: mask must be a comparison of nl.arange / nl.mgrid indices, "
                           f"got {mask!r}")
    return mask.counts(what)


def broadcast_grids(grids: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The grid of index expressions used together: equal ranks, each axis one size or 1
    (nl.arange(P)[:, None] with nl.arange(F)[None, :] spans a P x F grid)."""
    if len({len(grid) for grid in grids}) != 1:
        raise kernel_error("nl.arange / nl.mgrid indices used together must have the same rank")
    sizes = []
    for axis_sizes in zip(*grids):
        wide = {size for size in axis_sizes if size != 1}
        if len(wide) > 1:
            raise kernel_error(f"nl.arange / nl.mgrid indices of sizes {sorted(wide)} cannot be "
                               f"combined on one axis")
        sizes.append(wide.pop() if wide else 1)
    return tuple(sizes)
