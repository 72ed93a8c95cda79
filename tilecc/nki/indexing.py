"""Index expressions of NKI 1.x kernels: `nl.arange`, `nl.mgrid` grids and `mask=` clauses.

Contract: an IndexExpr is `offset + sum(step * k_axis)` over a grid of `sizes` (the grid of
nl.mgrid[...] or nl.arange(n)[:, None] / [None, :]); `+`, `-` with ints or other expressions
and `*` by ints stay affine, expressions of different grids broadcast like numpy
(`broadcast_grids`). Comparing an expression with an int gives a Mask; tilecc traces whole
tiles, so a Mask is accepted only when it holds on the whole grid (`check_mask`).
tilecc/nki/tensor.py turns expressions used as indices into access patterns.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.nki.errors import kernel_error


@dataclass(frozen=True, slots=True)
class IndexExpr:
    """offset + sum(step * k_axis) over a grid of `sizes` (from nl.arange / nl.mgrid)."""
    offset: int
    terms: tuple[tuple[int, int], ...]   # (grid axis, step)
    sizes: tuple[int, ...]

    def _shift(self, other: object, sign: int) -> IndexExpr:
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
        """arange(n)[:, None] -> grid axis 0 of 2; arange(n)[None, :] -> grid axis 1 of 2."""
        if len(self.sizes) != 1 or not isinstance(key, tuple) or len(key) != 2:
            raise kernel_error("an nl.arange index is reshaped with [:, None] or [None, :]")
        if key[1] is None and key[0] == slice(None):
            return IndexExpr(self.offset, tuple((0, s) for _, s in self.terms), (self.sizes[0], 1))
        if key[0] is None and key[1] == slice(None):
            return IndexExpr(self.offset, tuple((1, s) for _, s in self.terms), (1, self.sizes[0]))
        raise kernel_error("an nl.arange index is reshaped with [:, None] or [None, :]")


@dataclass(frozen=True, slots=True)
class Mask:
    """`mask=` of NKI 1.x calls: comparisons of grid indices with ints, joined by `&`.
    tilecc traces whole tiles only, so a mask must hold on the whole grid (`check`)."""
    clauses: tuple[tuple[IndexExpr, str, object], ...]

    def __and__(self, other: object) -> Mask:
        if not isinstance(other, Mask):
            return NotImplemented
        return Mask(self.clauses + other.clauses)

    def check(self, what: str) -> None:
        for expr, op, bound in self.clauses:
            if isinstance(bound, bool) or not isinstance(bound, int):
                raise kernel_error(f"{what}: a mask compares an nl.arange / nl.mgrid index with an "
                                   f"int, got {bound!r}")
            low, high = expr.bounds()
            holds = {"<": high < bound, "<=": high <= bound, ">": low > bound, ">=": low >= bound}[op]
            if not holds:
                raise kernel_error(f"{what}: the mask (index {op} {bound}) excludes part of the tile "
                                   f"(index range [{low}, {high}]); tilecc traces whole tiles only")


def check_mask(mask: object, what: str) -> None:
    """Accept mask=None or a Mask that holds everywhere (see Mask)."""
    if mask is None:
        return
    if not isinstance(mask, Mask):
        raise kernel_error(f"{what}: mask must be a comparison of nl.arange / nl.mgrid indices, "
                           f"got {mask!r}")
    mask.check(what)


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
