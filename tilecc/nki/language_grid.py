"""`nki.language`'s indices, loops and launch grid: `nl.arange`, `nl.mgrid`, `nl.ds`, the loop
ranges, `nl.program_id` / `nl.num_programs` / `nl.program_ndim` and the grid annotations
`nl.nc` / `nl.spmd_dim` (re-exported by tilecc/nki/language.py, which documents the API).

Invariants: an index is an IndexExpr (tilecc/nki/indexing.py) over a dense grid; a loop range
is a plain `range` that tracing unrolls, its iteration count spent on the trace's step budget
(tilecc.limits) before the first iteration; grid queries read the active trace's launch grid.
"""

from __future__ import annotations

from tilecc.nki.errors import kernel_error
from tilecc.nki.indexing import IndexExpr
from tilecc.nki.tracer import active_trace, in_trace


def arange(start: int, stop: int | None = None, step: int = 1) -> IndexExpr:
    """An index over range(start, stop, step), for tensor[...] access patterns."""
    if stop is None:
        start, stop = 0, start
    num = len(range(start, stop, step))
    if num <= 0:
        raise kernel_error(f"nl.arange({start}, {stop}, {step}) is empty")
    return IndexExpr(start, ((0, step),), (num,))


class Grid(tuple[IndexExpr, ...]):
    """The indices of `nl.mgrid[...]`: a tuple (`i_p, i_f = nl.mgrid[...]`) whose axes are
    also `grid.p` (partition), `grid.x`, `grid.y`, `grid.z` (free axes), as in NKI."""

    def _axis(self, axis: int) -> IndexExpr:
        if axis >= len(self):
            raise kernel_error(f"this nl.mgrid has {len(self)} axes; it has no axis {axis}")
        return self[axis]

    p = property(lambda self: self._axis(0))
    x = property(lambda self: self._axis(1))
    y = property(lambda self: self._axis(2))
    z = property(lambda self: self._axis(3))


class _MGrid:
    """`nl.mgrid[0:128, 0:512]`: one index per axis of a dense grid."""

    def __getitem__(self, key: object) -> Grid:
        slices = key if isinstance(key, tuple) else (key,)
        if not all(isinstance(s, slice) for s in slices):
            raise kernel_error("nl.mgrid takes slices: nl.mgrid[0:128, 0:512]")
        ranges = [range(*s.indices(s.stop)) for s in slices]
        sizes = tuple(len(r) for r in ranges)
        if any(size == 0 for size in sizes):
            raise kernel_error(f"nl.mgrid{list(sizes)} has an empty axis")
        return Grid(IndexExpr(r.start, ((axis, r.step),), sizes) for axis, r in enumerate(ranges))


mgrid = _MGrid()


def ds(start: int, size: int) -> slice:
    """A slice of `size` elements from `start` (nl.ds)."""
    return slice(start, start + size)


def affine_range(start: int, stop: int | None = None, step: int = 1,
                 directives: object = None) -> range:
    """A loop range; tracing unrolls it (nl.sequential_range / nl.static_range alike), so
    its iterations count as trace steps (tilecc.limits), before the first one runs. NKI 1.x
    `directives=ncc.no_reorder()` steer its scheduler: program order is kept anyway."""
    loop = range(start, stop, step) if stop is not None else range(start)
    # len() of a range beyond sys.maxsize overflows: counted by hand (`max` here is nl.max)
    if in_trace() and (count := -(-(loop.stop - loop.start) // loop.step)) > 0:
        active_trace().spend(count)
    return loop


sequential_range = static_range = affine_range


def program_id(axis: int = 0) -> int:
    """This instance's index along `axis` of the SPMD launch grid (`kernel[gx, gy](...)`)."""
    return active_trace().program_id(axis)


def num_programs(axes: object = None) -> int | tuple[int, ...]:
    """The launch grid's size along `axes` (an int or a tuple of ints); without axes, the
    number of instances in the whole grid."""
    trace = active_trace()
    if axes is None:
        count = 1
        for size in trace.grid:
            count *= size
        return count
    if isinstance(axes, tuple):
        return tuple(trace.num_programs(axis) for axis in axes)
    return trace.num_programs(axes)


def program_ndim() -> int:
    """The number of axes of the SPMD launch grid (0 without a grid)."""
    return len(active_trace().grid)


def nc(count: int) -> int:
    """Launch-grid annotation: spread a grid dim over `count` NeuronCores. tilecc simulates
    every program on one core, so it only contributes `count` programs to that dim."""
    return count


def spmd_dim(*sizes: int) -> int:
    """Launch-grid annotation `nl.spmd_dim(nl.nc(2), 2)`: a grid dim of the product of sizes."""
    count = 1
    for size in sizes:
        count *= size
    return count
