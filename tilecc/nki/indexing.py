"""Index expressions of NKI 1.x kernels: `nl.arange`, `nl.mgrid` grids and `mask=` clauses.

Contract: an IndexExpr is `offset + sum(step * k_axis)` over a grid of `sizes` (the grid of
nl.mgrid[...] or nl.arange(n)[:, None] / [None, :]); `+`, `-` with ints or other expressions
and `*` by ints stay affine, expressions of different grids broadcast like numpy
(`broadcast_grids`). Comparing an expression with an int gives a Mask: a mask that holds on the whole grid
changes nothing; one that bounds each grid axis on its own keeps a box (`mask_box`: an interval
per axis, as a partial last tile `i * 128 + i_p < n` or a padded border `i_f >= 1`), to which
tilecc/nki/masking.py restricts every access of the instruction.
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
            sizes = broadcast_grids([self.sizes, other.sizes])
            steps = dict(self.broadcast(sizes).terms)
            for axis, step in other.broadcast(sizes).terms:
                steps[axis] = steps.get(axis, 0) + sign * step
            return IndexExpr(self.offset + sign * other.offset, tuple(sorted(steps.items())), sizes)
        return NotImplemented

    def broadcast(self, sizes: tuple[int, ...]) -> IndexExpr:
        """This expression on the broadcast grid `sizes`: a term on an axis of size 1 is the
        constant 0 there (numpy repeats it), so it steps nothing on the wider axis
        (`nl.arange(1)[None, :]` with an [P, F] grid stays index 0)."""
        terms = tuple((axis, step) for axis, step in self.terms
                      if self.sizes[axis] != 1 or sizes[axis] == 1)
        return IndexExpr(self.offset, terms, sizes)

    def __add__(self, other: object) -> IndexExpr:
        return self._shift(other, 1)

    __radd__ = __add__

    def __sub__(self, other: object) -> IndexExpr:
        return self._shift(other, -1)

    def __rsub__(self, other: object) -> IndexExpr:
        return (-self)._shift(other, 1)

    def __neg__(self) -> IndexExpr:
        return self * -1

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

    def describe(self) -> str:
        """`3 + 2*k1` style text of the expression (k<axis> is grid axis <axis>)."""
        parts = [f"{step}*k{axis}" if step != 1 else f"k{axis}" for axis, step in self.terms if step]
        return " + ".join(([str(self.offset)] if self.offset or not parts else []) + parts)

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


Box = dict[int, tuple[int, int]]   # grid axis -> [low, high) of the index values kept


@dataclass(frozen=True, slots=True)
class Mask:
    """`mask=` of NKI 1.x calls: comparisons of grid indices with ints, joined by `&`.
    A clause that holds on the whole grid changes nothing; every other clause must bound
    one grid axis (`i * 128 + ix < n`, `i_f >= 1`), so the kept region is a box: an interval
    of each axis (`box`). A clause on several axes (`i_p + i_f < n`, a causal mask) keeps a
    region that is not a box and is a KernelError naming it."""
    clauses: tuple[tuple[IndexExpr, str, object], ...]

    def __and__(self, other: object) -> Mask | bool:
        # a compile-time condition joined in (`(i_f < n) & (i * 128 < seqlen)` with loop
        # ints): True keeps the mask, False masks the whole call off
        if isinstance(other, (bool, np.bool_)):
            return self if other else False
        if not isinstance(other, Mask):
            return NotImplemented
        return Mask(self.clauses + other.clauses)

    __rand__ = __and__

    def __repr__(self) -> str:
        return " & ".join(f"({expr.describe()} {op} {bound!r})" for expr, op, bound in self.clauses)

    def box(self, what: str) -> Box:
        """grid axis -> [low, high) of the entries the mask keeps (axes it does not cut omitted)."""
        kept: Box = {}
        for expr, op, bound in self.clauses:
            bound = plain_number(bound)
            if isinstance(bound, bool) or not isinstance(bound, int):
                raise kernel_error(f"{what}: a mask compares an nl.arange / nl.mgrid index with an "
                                   f"int, got {bound!r}")
            low, high = expr.bounds()
            if {"<": high < bound, "<=": high <= bound, ">": low > bound, ">=": low >= bound}[op]:
                continue
            axis, (first, stop) = _clause_interval(expr, op, bound, what, self)
            old_first, old_stop = kept.get(axis, (0, expr.sizes[axis]))
            kept[axis] = (max(first, old_first), min(stop, old_stop))
            if kept[axis][0] >= kept[axis][1]:
                raise kernel_error(f"{what}: the mask {self!r} excludes the whole tile")
        return kept


def _clause_interval(expr: IndexExpr, op: str, bound: int, what: str,
                     mask: Mask) -> tuple[int, tuple[int, int]]:
    """The one grid axis `expr` steps along and the interval [first, stop) of its k with
    `expr(k) op bound`: an upper bound for a positive step under < / <=, a lower bound
    otherwise."""
    steps = [(axis, step) for axis, step in expr.terms if step != 0 and expr.sizes[axis] > 1]
    if len(steps) != 1:
        raise kernel_error(f"{what}: the mask {mask!r} keeps a region that is not a box (the "
                           f"clause ({expr.describe()} {op} {bound}) bounds several index axes "
                           f"together); tilecc supports masks that bound each index axis on its "
                           f"own, as (i_p < n) & (i_f >= 1)")
    (axis, step), size = steps[0], expr.sizes[steps[0][0]]
    # offset + step * k op bound, as k < limit / k <= limit / k > limit / k >= limit
    if step < 0:
        op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
        step, delta = -step, expr.offset - bound
    else:
        delta = bound - expr.offset
    if op in ("<", "<="):
        stop = -(-delta // step) if op == "<" else delta // step + 1
        return axis, (0, max(0, min(size, stop)))
    first = delta // step + 1 if op == ">" else -(-delta // step)
    return axis, (max(0, min(size, first)), size)


def mask_box(mask: object, what: str) -> Box:
    """The box `mask=` keeps (None, or a Mask): grid axis -> [low, high) of its entries."""
    if mask is None or (isinstance(mask, (bool, np.bool_)) and mask):
        return {}
    if isinstance(mask, (bool, np.bool_)):
        raise kernel_error(f"{what}: mask=False (the instruction is skipped) is not supported here")
    if not isinstance(mask, Mask):
        raise kernel_error(f"{what}: mask must be a comparison of nl.arange / nl.mgrid indices, "
                           f"got {mask!r}")
    return mask.box(what)


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
