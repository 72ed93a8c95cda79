"""Indirect DMA: rows of an HBM tensor gathered / scattered by an index tile.

Contract (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/
nki.isa.dma_copy.html, "Indirect addressing (gather/scatter)"; NKI 1.x
`nl.load(t[idx_tile, ...])` / `nl.store(t[idx_tile, ...], value)`):
- `t[idx, ...]` on an HBM tensor, with `idx` a [P, 1] int32 / uint32 tile on chip as the
  first index and ints / slices / single-axis nl.arange / nl.mgrid indices on the other
  dims, and `t.ap(pattern=[[row, P], [step, num], ...], offset=o, vector_offset=idx,
  indirect_dim=0)` (2.x) are an IndirectView: P rows, partition p being row idx[p] of the
  row access the other indices (or pairs) name. Its shape is [P, ...row dims].
- A DMA with an IndirectView on one side (nisa.dma_copy, and so nl.load / nl.store) is one
  KLR IndirectDmaCopy: a gather when it is the source, a scatter when it is the
  destination; the other side is an on-chip tile of P partitions and the row's element
  count. oob_mode as documented: error (default) rejects an index outside the tensor's
  rows, skip leaves that partition out; NKI 1.x `dst_rmw_op=np.add` on a scatter adds into
  the rows (a row named twice gets both). Both sides indirect, scalar_offset (a register or
  1 x 1 offset) and indirect_dim other than 0 are located KernelErrors.
- An IndirectView is only for DMAs (dma_transpose gathers it into SBUF first,
  tilecc/nki/isa_dma.py): indexing it again, reshaping it or computing on it is a
  KernelError.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.klr import ast
from tilecc.nki.errors import kernel_error
from tilecc.nki.operators import install
from tilecc.nki.indexing import IndexExpr
from tilecc.nki.tensor import Dim, NkiTensor
from tilecc.nki.tracer import active_trace

INDEX_DTYPES = ("int32", "uint32")


@dataclass(frozen=True, eq=False)
class IndirectView(NkiTensor):
    """P rows of an HBM tensor picked by `index` (module docstring); `row` is the access of
    one row (partition 0), whose dims after the first are this view's."""
    index: NkiTensor | None = None
    row: NkiTensor | None = None

    def __getitem__(self, key: object) -> NkiTensor:
        raise kernel_error(f"{self!r} is an indirect (index-tile) access; it can only be "
                           f"loaded, stored or DMA-copied, not indexed again")

    def reshape(self, shape: tuple[int, ...] | list[int]) -> NkiTensor:
        raise kernel_error(f"{self!r} is an indirect (index-tile) access and cannot be reshaped")

    def parts(self) -> tuple[NkiTensor, NkiTensor]:
        assert self.index is not None and self.row is not None
        return self.index, self.row


def _index_tile(value: NkiTensor, what: str) -> NkiTensor:
    if not value.alloc.on_chip or value.dtype not in INDEX_DTYPES or value.free_elements != 1:
        raise kernel_error(f"{what}: the index must be a [P, 1] int32 / uint32 tile on chip, got "
                           f"a {list(value.shape)} {value.buffer} {value.dtype} tensor")
    return value


def _view(table: NkiTensor, index: NkiTensor, row: NkiTensor) -> IndirectView:
    stride = table.alloc.free_size // table.alloc.shape[0]
    dims = (Dim(stride, index.partitions), *row.dims[1:])
    return IndirectView(table.alloc, row.offset, 0, dims, None, index, row)


def _as_slice(item: object) -> object:
    """A single-axis nl.arange / nl.mgrid index (`iy` of `nl.mgrid[0:P, 0:F]`) as a slice."""
    if not isinstance(item, IndexExpr):
        return item
    if len(item.terms) != 1 or item.terms[0][1] <= 0:
        raise kernel_error(f"an indirect access takes ints, slices or single-axis nl.arange "
                           f"indices after the index tile, got {item!r}")
    axis, step = item.terms[0]
    num = item.sizes[axis]
    return slice(item.offset, item.offset + step * (num - 1) + 1, step)


def tile_indexed_view(tensor: NkiTensor, items: list[object]) -> NkiTensor:
    """An index holding a tile: rows of an HBM tensor picked by an index tile (here), or an
    on-chip access at a dynamic offset (tilecc/nki/isa_dynamic.py)."""
    if tensor.alloc.on_chip:
        from tilecc.nki.isa_dynamic import dynamic_view
        return dynamic_view(tensor, items)
    return indirect_view(tensor, items)


def indirect_view(table: NkiTensor, items: list[object]) -> IndirectView:
    """`table[idx, ...]` (NkiTensor.__getitem__ with a tile among the indices)."""
    what = f"indexing {table!r} with a tile"
    if table.alloc.on_chip or table.shape != table.alloc.shape or table.offset:
        raise kernel_error(f"{what}: an index tile selects rows of a whole HBM tensor (an "
                           f"indirect DMA); on chip use nisa.nc_n_gather / nisa.local_gather")
    first, *rest = items
    if not isinstance(first, NkiTensor) or any(isinstance(i, NkiTensor) for i in rest):
        raise kernel_error(f"{what}: only the first index may be a tile of row numbers")
    index = _index_tile(first, what)
    row = table[(slice(0, 1), *(_as_slice(i) for i in rest))]
    return _view(table, index, row)


def explicit_indirect(table: NkiTensor, pattern: list[list[int]], offset: int,
                      scalar_offset: object, vector_offset: object, indirect_dim: object) -> IndirectView:
    """`table.ap(pattern, offset, vector_offset=idx, indirect_dim=0)` of NKI 2.x."""
    what = "tensor.ap()"
    if scalar_offset is not None:
        raise kernel_error(f"{what}: scalar_offset (a register or 1 x 1 dynamic offset) is not "
                           f"supported by tilecc; vector_offset with indirect_dim=0 is")
    if indirect_dim not in (0, None) or not isinstance(vector_offset, NkiTensor):
        raise kernel_error(f"{what}: an indirect access needs a vector_offset tile and "
                           f"indirect_dim=0 (rows), got {indirect_dim!r}")
    if table.alloc.on_chip or table.shape != table.alloc.shape:
        raise kernel_error(f"{what}: vector_offset indexes the rows of a whole HBM tensor")
    index = _index_tile(vector_offset, what)
    stride = table.alloc.free_size // table.alloc.shape[0]
    pairs = [tuple(p) for p in pattern] if isinstance(pattern, (list, tuple)) else []
    if len(pairs) < 2 or any(len(p) != 2 or not all(isinstance(v, int) for v in p) for p in pairs):
        raise kernel_error(f"{what}: pattern is a list of [step, num] int pairs, the row pair "
                           f"first, got {pattern!r}")
    (row_step, count), free = pairs[0], pairs[1:]
    if row_step != stride or count != index.partitions:
        raise kernel_error(f"{what}: the first pair must step one row per index, "
                           f"[{stride}, {index.partitions}], got [{row_step}, {count}]")
    low = offset + sum(min(0, s * (n - 1)) for s, n in free)
    high = offset + sum(max(0, s * (n - 1)) for s, n in free)
    if low < 0 or high >= stride or any(n <= 0 for _, n in free):
        raise kernel_error(f"{what}: the pairs after the first must stay inside one row of "
                           f"{stride} elements, {[list(p) for p in free]} at offset {offset} do not")
    row = NkiTensor(table.alloc, offset, 0, (Dim(stride, 1), *(Dim(s, n) for s, n in free)))
    return _view(table, index, row)


def indirect_dma_copy(dst: NkiTensor, src: NkiTensor, skip: bool, accumulate: bool = False) -> None:
    """The IndirectDmaCopy of a DMA with an IndirectView on one side."""
    what = "nisa.dma_copy"
    if isinstance(dst, IndirectView) and isinstance(src, IndirectView):
        raise kernel_error(f"{what}: only one side of a DMA may be indirect")
    scatter = isinstance(dst, IndirectView)
    if accumulate and not scatter:
        raise kernel_error(f"{what}: dst_rmw_op needs the indirect side to be dst (a scatter-add)")
    view, chip = (dst, src) if isinstance(dst, IndirectView) else (src, dst)
    assert isinstance(view, IndirectView)
    index, row = view.parts()
    if not chip.alloc.on_chip or chip.buffer != "sbuf":
        raise kernel_error(f"{what}: the other side of an indirect DMA must be an SBUF tile, got "
                           f"{chip!r}")
    if chip.partitions != index.partitions or chip.free_elements != row.free_elements:
        raise kernel_error(f"{what}: {chip!r} must be [{index.partitions}, {row.free_elements}] "
                           f"(one partition per index, one row each)")
    trace = active_trace()
    hbm = trace.access(row, dma=True)
    on_chip = trace.access(chip, dma=True)
    oob = ast.DmaBounds.skip if skip else ast.DmaBounds.error
    idx = trace.access(index, dma=True)
    if scatter:
        trace.emit(ast.IndirectDmaCopy(hbm, on_chip, idx, True, oob, accumulate))
    else:
        trace.emit(ast.IndirectDmaCopy(on_chip, hbm, idx, False, oob))


# the operator behind indexing a tensor with a tile of indices (tilecc/nki/operators.py)
install("tile_indexed_view", tile_indexed_view)
