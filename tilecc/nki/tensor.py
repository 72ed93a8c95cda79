"""Tensors and tiles of a traced kernel, and how indexing turns into access patterns.

Invariants:
- An Allocation is one named buffer: an HBM tensor (kernel argument, result, scratch) or an
  on-chip SBUF / PSUM tensor. On chip, one logical dim is the partition dim (dim 0, or the
  dim wrapped in `nl.par_dim`); it has at most 128 entries, and the other dims are laid out
  row-major inside each partition. HBM tensors are row-major; their first indexed dim plays
  the partition role when a DMA moves them.
- An NkiTensor is a view of an Allocation: `offset` (elements; on chip, within a partition),
  `par_start` (first partition, on chip) and `dims`, one (step, num) pair per view axis,
  slowest first. On chip the first dim of a view is always the partition dim (step counted
  in partitions); an integer index on it keeps it with size 1, so a tile stays partition-first.
  A view of a tensor with block dims before its nl.par_dim may keep some of them (indexing
  the leading ones with ints); its partition dim is then `par_index`, not the first.
- Indexing accepts ints, slices (`nl.ds(start, size)` is a slice), `...`, and affine index
  expressions of `nl.arange` / `nl.mgrid` (tilecc/nki/indexing.py). An expression access
  has numpy's advanced-indexing shape, the broadcast shape of its indices (NKI docs: "numpy's
  advanced indexing", the max-pool example of the indexing guide; `tmp[i, 0]` with
  i = nl.arange(64)[:, None] on https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/nki.errors.html,
  err_1d_arange_not_supported, is a [64, 1] tile): its axes are the grid axes its indices
  step and the grid's size-1 axes, in grid order (`v[nl.arange(64)[:, None]]` is [64, 1];
  `t[i0, 2 * i1 + i3, 2 * i2 + i4]` over a 5-d grid is [i0, i1, i2, i3, i4]), except that
  the first index's axes come first (`a[ip, jf]` with `jf, ip = nl.mgrid[0:n, 0:1]` is
  [1, n]: the first index is the partition dim whatever its grid axis), and an axis of
  size > 1 that no index steps is left out (nl.mgrid's grids are dense in numpy, and
  `row[i_one, i_f]` of a [P, W, 1] grid is the [1, W] row kernels broadcast later);
  `0 * ix` keeps an axis as a broadcast (step 0). (The index arithmetic is in
  tilecc/nki/view_indexing.py.) `tensor.ap(pattern, offset)` (NKI 2.x) gives the pairs explicitly;
  `broadcast_to` repeats size-1 dims with step 0 (on chip, a one-partition tile broadcast
  to P partitions is copied into a new tile: partitions cannot be read with step 0).
- A tile made by a masked instruction has the full shape and holds values only inside the
  mask's box (`Allocation.written`, tilecc/nki/masking.py); `tile[idx] = value` is a copy
  (tensor_copy / dma_copy) or a fill (memset), and copying such a tile copies that box; `a + b`,
  `a / 2.0`, `a < b` ... are NKI's tile-level ops (tilecc/nki/tile_ops.py); `if tile:` is a
  KernelError (a tile has no values while tracing); `if hbm_tensor:` is true.
- This module is plain data: it imports nothing above it. The operators that compute
  (arithmetic, assignment, partition broadcasts, `.ap`) are instructions, installed by the
  instruction layer (tilecc/nki/operators.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import overload

from tilecc.nki.dtypes import canonical_dtype, plain_number
from tilecc.nki.errors import kernel_error
from tilecc.nki.indexing import IndexExpr, broadcast_grids, mask_box
from tilecc.nki.operators import installed
# PMAX, the partition capacities and check_allocation are exported here for the frontend
from tilecc.nki.tensor_layout import (PMAX, PSUM_PARTITION_BYTES, SBUF_PARTITION_BYTES, Dim,
                                      check_allocation)
from tilecc.nki.view_indexing import index_basic, index_grid


@dataclass(eq=False)
class Allocation:
    name: str
    shape: tuple[int, ...]
    dtype: str
    buffer: str            # "hbm" | "sbuf" | "psum"
    par_axis: int = 0
    # made by a masked instruction: [low, high) per dim of `shape` that it wrote (the rest
    # is never written by it); None: the whole tensor (tilecc/nki/masking.py)
    written: tuple[tuple[int, int], ...] | None = None
    # made by an instruction whose mask= was a compile-time False (tracer.masked_off): never
    # written, and assigning or storing it does nothing, as the skipped instruction would
    masked_off: bool = False
    strides: tuple[int, ...] = field(init=False)
    free_size: int = field(init=False)   # elements per partition (on chip) / in total (HBM)

    def __post_init__(self) -> None:
        strides = [0] * len(self.shape)
        running = 1
        for axis in reversed(range(len(self.shape))):
            if self.on_chip and axis == self.par_axis:
                strides[axis] = 1
                continue
            strides[axis] = running
            running *= self.shape[axis]
        self.strides = tuple(strides)
        self.free_size = running

    @property
    def on_chip(self) -> bool:
        return self.buffer != "hbm"

    @property
    def partitions(self) -> int:
        return self.shape[self.par_axis] if self.on_chip else 1

    def full_view(self) -> NkiTensor:
        dims = tuple(Dim(stride, size, self.on_chip and axis == self.par_axis)
                     for axis, (stride, size) in enumerate(zip(self.strides, self.shape)))
        return NkiTensor(self, 0, 0, dims)


@dataclass(frozen=True, eq=False)
class GridAccess:
    """How a view was indexed with nl.arange / nl.mgrid: enough to index it again on a
    smaller grid when a mask cuts it."""
    parent: NkiTensor
    items: tuple[object, ...]
    sizes: tuple[int, ...]
    problem: str | None
    axes: tuple[int | None, ...]   # the grid axis of each view dim (None: an added partition dim)


def _arith(name: str, reflected: bool = False) -> Callable[[NkiTensor, object], NkiTensor]:
    """The NkiTensor operator method of the nl op `name` (`reflected`: for `2 * t`): the
    tile-level instruction installed as "binary" (tilecc/nki/operators.py)."""
    def method(self: NkiTensor, other: object) -> NkiTensor:
        if name == "add" and isinstance(other, IndexExpr):   # `offsets[0, i] + iy`
            dynamic: NkiTensor = installed("dynamic_index")(self, other)
            return dynamic
        left, right = (other, self) if reflected else (self, other)
        result: NkiTensor = installed("binary")(name, left, right)
        return result
    return method


@dataclass(frozen=True, eq=False)
class NkiTensor:
    alloc: Allocation
    offset: int
    par_start: int
    dims: tuple[Dim, ...]
    grid: GridAccess | None = field(default=None, repr=False)

    @property
    def problem(self) -> str | None:
        """Why this grid access cannot be used as it is (out of bounds), if so: a mask= that
        cuts it back inside the tensor makes it usable (`masked`)."""
        return self.grid.problem if self.grid is not None else None

    def usable(self) -> NkiTensor:
        if (problem := self.problem) is not None:
            raise kernel_error(problem)
        return self

    def masked(self, mask: object, what: str) -> NkiTensor:
        """This access restricted to the box `mask` keeps."""
        box = mask_box(mask, what)
        return self.restricted(self.dims_box(box, what)) if box else self.usable()

    def dims_box(self, box: dict[int, tuple[int, int]], what: str) -> tuple[tuple[int, int], ...]:
        """A mask's box (grid axis -> [low, high)) as [low, high) per dim of this view: a grid
        access maps its dims to the grid axes they step; another tile takes the grid axis of
        the same position (`nl.exp(t, mask=i_p < n)`)."""
        if self.grid is not None:
            axes = self.grid.axes
        elif any(axis >= self.ndim for axis in box):
            raise kernel_error(f"{what}: the mask bounds grid axis {max(box)} but {self!r} has "
                               f"{self.ndim} dims")
        else:
            axes = tuple(range(self.ndim))
        return tuple(box.get(axis, (0, num)) if axis is not None else (0, num)
                     for axis, num in zip(axes, self.shape))

    def restricted(self, box: tuple[tuple[int, int], ...]) -> NkiTensor:
        """This view cut to [low, high) of each dim: a grid access is indexed again on the
        smaller grid (the offsets move by low), so a mask can bring an access that reaches
        outside its tensor back inside; another view is sliced."""
        if all(span == (0, num) for span, num in zip(box, self.shape)):
            return self.usable()
        if self.grid is None:
            return self[tuple(slice(low, high) for low, high in box)]
        sizes, shift = list(self.grid.sizes), {}
        for axis, (low, high) in zip(self.grid.axes, box):
            if axis is not None:
                sizes[axis], shift[axis] = high - low, low
        items = [IndexExpr(i.offset + sum(step * shift.get(a, 0) for a, step in i.terms), i.terms,
                           tuple(sizes)) if isinstance(i, IndexExpr) else i for i in self.grid.items]
        return self.grid.parent._index_grid(items, tuple(sizes)).usable()

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(dim.num for dim in self.dims)

    @property
    def dtype(self) -> str:
        return self.alloc.dtype

    @property
    def buffer(self) -> str:
        return self.alloc.buffer

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def name(self) -> str:
        return self.alloc.name

    @property
    def par_index(self) -> int:
        """Which dim of the view is the partition dim: the first, except in the whole view of
        an on-chip tensor with dims before its nl.par_dim (`nl.zeros((4, nl.par_dim(128), n))`)."""
        return next((i for i, dim in enumerate(self.dims) if dim.is_par), 0)

    @property
    def partitions(self) -> int:
        """Partition count of the view (HBM: its first dim, the DMA partition role)."""
        return self.dims[self.par_index].num if self.dims else 1

    @property
    def free_elements(self) -> int:
        count, par = 1, self.par_index
        for i, dim in enumerate(self.dims):
            if i != par:
                count *= dim.num
        return count

    def __repr__(self) -> str:
        return f"<{self.buffer} tensor {self.name}{list(self.shape)} {self.dtype}>"

    def __getitem__(self, key: object) -> NkiTensor:
        self.usable()
        items = list(key) if isinstance(key, tuple) else [key]
        # numpy integers (an index read from a host-side np.int32 table) are ints
        items = [plain_number(item) for item in items]
        if any(isinstance(item, NkiTensor) or hasattr(item, "dynamic_offset") for item in items):
            indirect: NkiTensor = installed("tile_indexed_view")(self, items)   # indirect / dynamic access
            return indirect
        if any(isinstance(item, (list, tuple)) for item in items):
            raise kernel_error(f"indexing {self!r} with a list of indices is a gather, which "
                               f"KLR / BIR (spec 003) cannot express; index with ints, slices, "
                               f"nl.ds or nl.arange / nl.mgrid")
        if any(isinstance(item, IndexExpr) for item in items):
            return self._index_grid(items)
        return self._index_basic(items)

    def __setitem__(self, key: object, value: object) -> None:
        """`tile[...] = src` copies (tensor_copy on chip, dma_copy when HBM is involved);
        `tile[...] = 0.0` fills (memset), as NKI's assignment to a tile does (the
        instruction installed as "assign", tilecc/nki/operators.py)."""
        installed("assign")(self[key], value)

    __add__, __radd__ = _arith("add"), _arith("add", True)
    __sub__, __rsub__ = _arith("subtract"), _arith("subtract", True)
    __mul__, __rmul__ = _arith("multiply"), _arith("multiply", True)
    __truediv__, __rtruediv__ = _arith("divide"), _arith("divide", True)
    __lt__, __le__ = _arith("less"), _arith("less_equal")
    __gt__, __ge__ = _arith("greater"), _arith("greater_equal")

    def __iadd__(self, other: object) -> NkiTensor:
        """`psum += nisa.nc_matmul(...)` accumulates in place (tilecc/nki/isa_tensor_engine.py);
        any other `+=` is `self + other`."""
        result: NkiTensor = installed("add_into")(self, other)
        return result

    def same_view(self, other: NkiTensor) -> bool:
        return (self.alloc is other.alloc and self.offset == other.offset
                and self.par_start == other.par_start and self.dims == other.dims)

    def __neg__(self) -> NkiTensor:
        return self * -1.0

    def __bool__(self) -> bool:
        """An HBM tensor (a kernel argument or result) exists, so it is true (`if bias:` in
        published kernels); a tile has no values while the kernel is traced."""
        if not self.alloc.on_chip:
            return True
        raise kernel_error(f"{self!r} has no values while the kernel is traced: a condition on a "
                           f"tile cannot be traced")

    def _index_basic(self, items: list[object]) -> NkiTensor:
        return self._make(*index_basic(self, self.offset, self.par_start, self.dims, items))

    def _index_grid(self, items: list[object], sizes: tuple[int, ...] | None = None) -> NkiTensor:
        if sizes is None:
            sizes = broadcast_grids([item.sizes for item in items if isinstance(item, IndexExpr)])
        items = [item.broadcast(sizes) if isinstance(item, IndexExpr) else item for item in items]
        offset, par_start, dims, axes, problem = index_grid(
            self, self.offset, self.par_start, self.dims, items, sizes, self.alloc.on_chip)
        view = self._make(offset, par_start, dims)
        return replace(view, grid=GridAccess(self, tuple(items), sizes, problem, tuple(axes)))

    def _make(self, offset: int, par_start: int, dims: list[Dim]) -> NkiTensor:
        # block dims before nl.par_dim may stay (`buf[i]` of a (B0, B1, par_dim(P), F) tensor
        # is a (B1, par_dim(P), F) view), as long as the partition dim itself is kept
        if self.alloc.on_chip and not any(dim.is_par for dim in dims):
            raise kernel_error(f"an {self.buffer} tile must keep its partition dimension; "
                               f"index the dims before nl.par_dim with ints")
        par = next((dim for dim in dims if dim.is_par), None)
        if par is not None and par.num > 1 and par.step != 1:
            raise kernel_error("an on-chip tile must cover consecutive partitions (partition step 1)")
        return NkiTensor(self.alloc, offset, par_start, tuple(dims))

    def ap(self, pattern: list[list[int]], offset: int = 0, scalar_offset: object = None,
           vector_offset: object = None, indirect_dim: object = None, dtype: object = None) -> NkiTensor:
        """NKI 2.x explicit access pattern on a whole tensor (tilecc/nki/explicit_ap.py)."""
        result: NkiTensor = installed("explicit_access")(self, pattern, offset, scalar_offset,
                                                         vector_offset, indirect_dim, dtype)
        return result

    def indirect(self, *args: object, **kwargs: object) -> NkiTensor:
        """NKI's tensor indirection (a per-partition gather): not expressible in KLR / BIR."""
        raise kernel_error(f"{self.name}.indirect(...) is a gather (tensor indirection), which "
                           f"KLR / BIR (spec 003) cannot express")

    def view(self, dtype: object) -> NkiTensor:
        """NKI's bit reinterpretation (`int_tile.view(nl.float32)`): refused, since a KLR / BIR
        access reads its tensor in the tensor's own dtype."""
        if canonical_dtype_or_none(dtype) == self.dtype:
            return self   # a view as its own dtype changes nothing
        raise kernel_error(f"{self!r}.view({dtype!r}) reinterprets the bits as another dtype; KLR "
                           f"and BIR accesses read a tensor in its own dtype, so tilecc cannot "
                           f"express it (nisa.tensor_copy converts values instead)")

    def broadcast_to(self, shape: tuple[int, ...] | list[int]) -> NkiTensor:
        """Repeat size-1 dims (step 0) to `shape` (a one-partition tile to P partitions: a copy)."""
        self.usable()
        shape = tuple(shape)
        if len(shape) != self.ndim:
            raise kernel_error(f"cannot broadcast {self!r} to {shape}: the rank must stay {self.ndim}")
        dims = []
        for dim, size in zip(self.dims, shape):
            if size == dim.num:
                dims.append(dim)
            elif dim.num == 1 and not (dim.is_par and dims):
                dims.append(Dim(0, size, dim.is_par))
            else:
                raise kernel_error(f"cannot broadcast a dim of size {dim.num} of {self!r} to {size}")
        if self.alloc.on_chip and dims[0].num != self.dims[0].num:
            # partitions cannot be read with step 0: copy the one partition into a new tile
            copied: NkiTensor = installed("broadcast_partitions")(self, shape)
            return copied
        return NkiTensor(self.alloc, self.offset, self.par_start, tuple(dims))

    def reshape(self, shape: tuple[int, ...] | list[int]) -> NkiTensor:
        """A row-major reshape of a contiguous HBM tensor (as `g.reshape((1, n))`), or of an
        on-chip tile's free dims (its partition dim stays dim 0, nki.language.NkiTensor.html)."""
        shape = tuple(shape)
        if self.alloc.on_chip:
            return self._reshape_free(shape)
        count = 1
        for size in shape:
            count *= size
        if count != self.alloc.free_size or not self.is_whole_row_major():
            raise kernel_error(f"cannot reshape {self!r} to {shape}: only a whole HBM tensor (or a "
                               f"reshape of one) can be reshaped, to the same number of elements")
        return NkiTensor(self.alloc, 0, 0, _row_major_dims(shape))

    def _reshape_free(self, shape: tuple[int, ...]) -> NkiTensor:
        """On chip: the partition dim is kept as dim 0; the free dims, contiguous in their
        partition, take the new row-major shape."""
        free, running = self.dims[1:], 1
        contiguous = self.par_index == 0
        for dim in reversed(free):
            contiguous = contiguous and (dim.num == 1 or dim.step == running)
            running *= dim.num
        count = 1
        for size in shape[1:]:
            count *= size
        if not shape or shape[0] != self.partitions or count != running or not contiguous:
            raise kernel_error(f"cannot reshape {self!r} to {list(shape)}: an on-chip tile keeps "
                               f"its partition dim ({self.partitions}) first and reshapes free "
                               f"dims that are contiguous in a partition, to as many elements")
        return NkiTensor(self.alloc, self.offset, self.par_start,
                         (self.dims[0], *(Dim(d.step, d.num) for d in _row_major_dims(shape[1:]))))

    def is_whole_row_major(self) -> bool:
        """This view is its whole HBM tensor in row-major order, in its own shape: the tensor
        itself or a reshape of it."""
        return (not self.alloc.on_chip and self.offset == 0 and self.free_elements * self.partitions
                == self.alloc.free_size and self.dims == _row_major_dims(self.shape))


def canonical_dtype_or_none(dtype: object) -> str | None:
    try:
        return canonical_dtype(dtype)
    except ValueError:
        return None


def _row_major_dims(shape: tuple[int, ...]) -> tuple[Dim, ...]:
    dims, running = [], 1
    for size in reversed(shape):
        dims.append(Dim(running, size))
        running *= size
    return tuple(reversed(dims))


@overload
def mask_tile(what: str, value: NkiTensor, mask: object) -> NkiTensor: ...
@overload
def mask_tile(what: str, value: object, mask: object) -> object: ...


def mask_tile(what: str, value: object, mask: object) -> object:
    """An operand restricted to the box `mask=` keeps (`dims_box`); non-tiles pass through."""
    box = mask_box(mask, what)
    if not box or not isinstance(value, NkiTensor):
        return value
    return value.restricted(value.dims_box(box, what))
