"""Where an access pattern's elements are in its location: the geometry of its numpy view.

Contract: `view_geometry(placement, ap)` gives the (shape, byte offset, strides) with which
`Machine` makes the view of `ap` over the placement's bytes: the partition pair first, then
one axis per [step, num] free pair, offsets in elements of the access dtype; a pair of one
element has stride 0 (its step, any int64, never moves). SB / PSUM accesses: at most 128
partitions, partition step = the location's row, partitions and free elements inside the
location; HBM is flat (element = offset + sum over all pairs of index * step) and must stay
inside the tensor. Anything else is a SimError naming the access and the indices.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tilecc.bir.enums import MemoryKind
from tilecc.bir.inst import AccessPattern
from tilecc.errors import SimError
from tilecc.sim.dtypes import numpy_dtype

if TYPE_CHECKING:  # the placement record is the memory's; it imports this module
    from tilecc.sim.memory import Placement

PARTITIONS = 128


def view_geometry(pl: Placement, ap: AccessPattern) -> tuple[tuple[int, ...], int, tuple[int, ...]]:
    """(shape, byte offset, strides) of the numpy view of `ap` in its placement `pl`; SimError
    for an access outside it (the checks of the module docstring)."""
    if not ap.ap:
        raise SimError(f"access to {ap.memref!r} has no partition pair")
    if numpy_dtype(ap.dtype).itemsize != pl.itemsize:
        raise SimError(f"access to {ap.memref!r} reads {ap.dtype.name} elements of a "
                       f"{pl.loc.dtype.name} location")
    (pstep, pnum), *free = ap.ap
    row = pl.row
    row_bytes = pl.data.shape[1]
    if pl.loc.kind == MemoryKind.HBM:
        return _hbm_geometry(pl, ap)
    if ap.offset < 0:
        raise SimError(f"access to {ap.memref!r} has a negative offset {ap.offset}")
    if row <= 0:
        raise SimError(f"access to {ap.memref!r}: the location holds no element per partition")
    start, first = divmod(ap.offset, row)
    if not 0 < pnum <= PARTITIONS:
        raise SimError(f"access to {ap.memref!r} spans {pnum} partitions "
                       f"(1..{PARTITIONS})")
    if pnum > 1 and pstep != row:
        raise SimError(f"access to {ap.memref!r} has partition step {pstep}; "
                       f"the location's row is {row} elements")
    if start + pnum > pl.loc.partitions:
        raise SimError(f"access to {ap.memref!r} reaches partitions {start}.."
                       f"{start + pnum - 1}; the location has {pl.loc.partitions}")
    low, high = _reach(ap, first, free)
    if low < 0 or high >= row:
        raise SimError(f"access to {ap.memref!r} reaches free elements {low}..{high}; "
                       f"the location's row holds 0..{row - 1}")
    shape = (pnum,) + tuple(num for _, num in free)
    # a pair of one element never moves: its step (any int64 in the JSON) is no stride
    strides = (row_bytes,) + tuple(step * pl.itemsize if num > 1 else 0 for step, num in free)
    byte_offset = start * row_bytes + first * pl.itemsize
    return shape, byte_offset, strides


def _hbm_geometry(pl: Placement, ap: AccessPattern) -> tuple[tuple[int, ...], int, tuple[int, ...]]:
    """HBM is flat: element = offset + sum over ALL pairs of index * step."""
    total = pl.loc.partitions * pl.row
    low, high = _reach(ap, ap.offset, ap.ap)
    if low < 0 or high >= total:
        raise SimError(f"access to HBM tensor {ap.memref!r} reaches elements {low}..{high}; "
                       f"it holds 0..{total - 1}")
    if pl.row * pl.itemsize != pl.data.shape[1]:
        raise SimError(f"HBM tensor {ap.memref!r}: {pl.data.shape[1]} bytes per partition "
                       f"is not a whole number of {pl.loc.dtype.name} elements")
    shape = tuple(num for _, num in ap.ap)
    strides = tuple(step * pl.itemsize if num > 1 else 0 for step, num in ap.ap)
    return shape, ap.offset * pl.itemsize, strides


def _reach(ap: AccessPattern, start: int,
           pairs: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The lowest and highest element `pairs` reach from `start`; an empty pair is a SimError."""
    low = high = start
    for step, num in pairs:
        if num <= 0:
            raise SimError(f"access to {ap.memref!r} has an empty pair [{step}, {num}]")
        span = step * (num - 1)
        low, high = low + min(span, 0), high + max(span, 0)
    return low, high
