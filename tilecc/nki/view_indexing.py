"""How an index on a tensor view turns into the view's new geometry: offset, first partition
and dims (tilecc/nki/tensor.py's NkiTensor indexes through these functions).

Contract: each function takes the geometry of the view being indexed (`offset` in elements,
within a partition on chip; `par_start`; `view_dims`, slowest first) and the index items,
and returns the geometry of the result, or raises a KernelError naming `view` (used only
in messages). Invariants of the result, as stated in tilecc/nki/tensor.py: an int index on
the partition dim keeps it with size 1; an index-expression access has numpy's
advanced-indexing shape (the grid axes its indices step and the grid's size-1 axes, in
grid order, the first index's axes first); on chip it always has a partition dim. An
index-expression range outside its dim is not an error here: it is returned as
`problem`, for a mask= to cut back inside. Plain data: imports nothing above
tilecc/nki/errors.py, indexing.py and tensor_layout.py.
"""

from __future__ import annotations

from tilecc.nki.errors import kernel_error
from tilecc.nki.indexing import IndexExpr
from tilecc.nki.tensor_layout import Dim


def expand_index(view: object, items: list[object], ndim: int) -> list[object]:
    """`items` with its `...` expanded and trailing full slices added: one per dim of `view`."""
    if items.count(Ellipsis) > 1:
        raise kernel_error("an index can hold at most one '...'")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + [slice(None)] * (ndim - len(items) + 1) + items[at + 1:]
    if len(items) > ndim:
        raise kernel_error(f"too many indices ({len(items)}) for {view!r}")
    return items + [slice(None)] * (ndim - len(items))


def index_basic(view: object, offset: int, par_start: int, view_dims: tuple[Dim, ...],
                items: list[object]) -> tuple[int, int, list[Dim]]:
    """The offset, first partition and dims of `view` (at offset / par_start, with view_dims)
    indexed with ints and slices."""
    dims: list[Dim] = []
    for dim, item in zip(view_dims, expand_index(view, items, len(view_dims))):
        if isinstance(item, bool) or not isinstance(item, (int, slice)):
            raise kernel_error(f"cannot index {view!r} with {item!r}: expected an int, a "
                               f"slice, nl.ds(...) or an nl.arange / nl.mgrid expression")
        if isinstance(item, int):
            index = item + dim.num if item < 0 else item
            if not 0 <= index < dim.num:
                raise kernel_error(f"index {item} is out of bounds for a dimension of size "
                                   f"{dim.num} of {view!r}")
            start, step, num = index, 1, 1
        else:
            start, stop, step = item.indices(dim.num)
            if step <= 0:
                raise kernel_error(f"slice step must be positive, got {step}")
            check_slice(item, dim)
            num = max(0, (stop - start + step - 1) // step)
            if num == 0:
                raise kernel_error(f"slice {item} of a dimension of size {dim.num} is empty")
        if dim.is_par:
            par_start += start * dim.step
            dims.append(Dim(dim.step * step, num, True))
        else:
            offset += start * dim.step
            if not isinstance(item, int):
                dims.append(Dim(dim.step * step, num))
    return offset, par_start, dims


def check_slice(item: slice, dim: Dim) -> None:
    """A slice's int bounds lie within [-num, num] of its dim (Python would clip them)."""
    for bound in (item.start, item.stop):
        if isinstance(bound, int) and not -dim.num <= bound <= dim.num:
            raise kernel_error(f"slice {item.start}:{item.stop} is out of bounds for a "
                               f"dimension of size {dim.num}")


def index_grid(view: object, offset: int, par_start: int, view_dims: tuple[Dim, ...],
               items: list[object], sizes: tuple[int, ...], on_chip: bool
               ) -> tuple[int, int, list[Dim], list[int | None], str | None]:
    """The offset, first partition, dims, grid axis of each dim and out-of-bounds problem of
    `view` indexed with index expressions already broadcast to the grid `sizes`."""
    problem: str | None = None
    steps: list[dict[bool, int]] = [{} for _ in sizes]
    leading: list[int] = []   # grid axes of the first index (the partition dim on chip)
    expanded = expand_index(view, items, len(view_dims))
    for position, (dim, item) in enumerate(zip(view_dims, expanded)):
        if isinstance(item, int):
            item = IndexExpr(item, (), sizes)
        if not isinstance(item, IndexExpr):
            raise kernel_error("an access that uses nl.arange / nl.mgrid indices must index "
                               "every dimension with them or with an int")
        for axis, step in sorted(item.terms):
            steps[axis][dim.is_par] = steps[axis].get(dim.is_par, 0) + step * dim.step
            if position == 0 and axis not in leading:
                leading.append(axis)
        low, high = IndexExpr(item.offset, item.terms, sizes).bounds()
        if (low < 0 or high >= dim.num) and problem is None:
            problem = (f"index range [{low}, {high}] is out of bounds for a dimension of size "
                       f"{dim.num} of {view!r} (a mask= keeping the part inside would cut it)")
        if dim.is_par:
            par_start += item.offset * dim.step
        else:
            offset += item.offset * dim.step
    # the view's axes are the grid's, in grid order (numpy's broadcast shape of the
    # indices: `t[i0, 2 * i1 + i3, 2 * i2 + i4]` is [i0, i1, i2, i3, i4], so axis=[3, 4]
    # names the window), the first index's axes moved to the front
    order = leading + [axis for axis in range(len(sizes))
                       if (steps[axis] or sizes[axis] == 1) and axis not in leading]
    dims = []
    for axis in order:
        size = sizes[axis]
        if len(steps[axis]) > 1:
            raise kernel_error("one index axis cannot step both partitions and free elements")
        is_par, step = next(iter(steps[axis].items())) if steps[axis] else (False, 1)
        dims.append(Dim(step, size, is_par))
    axes: list[int | None] = list(order)
    if on_chip and not any(d.is_par for d in dims):
        if dims and not steps[order[0]]:   # `t[0, i_f]`: numpy's leading 1 is the partition dim
            dims[0] = Dim(1, 1, True)
        else:
            dims.insert(0, Dim(1, 1, True))
            axes.insert(0, None)
    return offset, par_start, dims, axes, problem
