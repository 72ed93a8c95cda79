"""Dynamic offsets: `nisa.tensor_copy_dynamic_src` / `nisa.tensor_copy_dynamic_dst`.

Contract (https://awsdocs-neuron.readthedocs-hosted.com/en/v2.26.1/nki/api/generated/
nki.isa.tensor_copy_dynamic_src.html and ..._dst.html): a copy on the Vector, Scalar or
GpSimd Engine between SBUF / PSUM tiles of equal partitions and elements per partition,
one side at a dynamic offset within each partition. The offset is a value in SBUF: an
on-chip tile element (`offsets[0, i]`, int32 / uint32) used in an index of a free dim,
alone or plus a static index (`src[ix, offsets[0, i] + iy]`). Such an index makes a
DynamicView: the static access (the dynamic element counted as 0) and the element that
moves it, times the stride of that dim. One dynamic index per access, never on the
partition dim; the copy is one KLR TensorCopyDynamic. `tensor_copy_dynamic_src(src)` (NKI
1.x) returns a new SBUF tile; `tensor_copy_dynamic_src(dst, src)` and
`tensor_copy_dynamic_dst(dst=, src=)` write dst. A DynamicView anywhere else is a
KernelError.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilecc.klr import ast
from tilecc.nki import operands as chk
from tilecc.nki.dtypes import canonical_dtype
from tilecc.nki.errors import kernel_error
from tilecc.nki.operators import install
from tilecc.nki.indexing import IndexExpr
from tilecc.nki.isa_enums import engine, klr_engine
from tilecc.nki.isa_legacy import two_forms
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import active_trace, assigned_name, klr_dtype

OFFSET_DTYPES = ("int32", "uint32")


@dataclass(frozen=True)
class DynamicIndex:
    """`offsets[0, i] + expr`: a runtime element plus a static index."""
    dynamic_offset: NkiTensor
    expr: IndexExpr | int


@dataclass(frozen=True, eq=False)
class DynamicView(NkiTensor):
    """A static on-chip access moved at run time by value(offset) * stride elements."""
    offset_tile: NkiTensor | None = None
    stride: int = 0

    def __getitem__(self, key: object) -> NkiTensor:
        raise kernel_error(f"{self!r} has a dynamic offset; it can only be copied by "
                           f"nisa.tensor_copy_dynamic_src / _dst, not indexed again")


def _offset_tile(value: NkiTensor) -> NkiTensor:
    if not value.alloc.on_chip or value.dtype not in OFFSET_DTYPES or \
            value.partitions * value.free_elements != 1:
        raise kernel_error(f"a dynamic offset must be one int32 / uint32 element of an on-chip "
                           f"tile, got {value!r} of shape {list(value.shape)}")
    return value


def dynamic_index(tile: NkiTensor, expr: object) -> Any:
    """`tile_element + expr` (NkiTensor + nl.arange / int); typed Any because it is the
    result of NkiTensor.__add__, whose other results are tiles."""
    if not isinstance(expr, (IndexExpr, int)) or isinstance(expr, bool):
        raise kernel_error(f"a dynamic offset adds an nl.arange / nl.mgrid index or an int, got "
                           f"{expr!r}")
    return DynamicIndex(_offset_tile(tile), expr)


def dynamic_view(tensor: NkiTensor, items: list[object]) -> DynamicView:
    """`tensor[..., offsets[0, i] + iy, ...]` of an on-chip tensor."""
    dynamic = [i for i, item in enumerate(items)
               if isinstance(item, (NkiTensor, DynamicIndex))]
    if len(dynamic) != 1:
        raise kernel_error(f"an access of {tensor!r} takes one dynamic offset, got {len(dynamic)}")
    position = dynamic[0]
    item = items[position]
    if isinstance(item, NkiTensor) and item.partitions * item.free_elements > 1:
        raise kernel_error(f"indexing {tensor!r} with a tile of indices: an index tile selects "
                           f"rows of a whole HBM tensor (an indirect DMA); on chip use "
                           f"nisa.nc_n_gather / nisa.local_gather, or one element as a dynamic "
                           f"offset")
    found = DynamicIndex(_offset_tile(item), 0) if isinstance(item, NkiTensor) else item
    assert isinstance(found, DynamicIndex)
    if position >= tensor.ndim or tensor.dims[position].is_par:
        raise kernel_error(f"a dynamic offset of {tensor!r} must index a free dim, not the "
                           f"partition dim")
    stride = tensor.dims[position].step
    static = tensor[tuple(found.expr if i == position else x for i, x in enumerate(items))]
    return DynamicView(static.alloc, static.offset, static.par_start, static.dims, static.grid,
                       found.dynamic_offset, stride)


def _copy(fn: str, dst: object, src: object, dynamic_src: bool, eng: object) -> None:
    d, s = chk.tile(fn, "dst", dst), chk.tile(fn, "src", src)
    view = s if dynamic_src else d
    if not isinstance(view, DynamicView) or view.offset_tile is None:
        side = "src" if dynamic_src else "dst"
        raise kernel_error(f"nisa.{fn}: {side} must be indexed with a dynamic offset (a tile "
                           f"element, as in t[ix, offsets[0, i] + iy])")
    if isinstance(s if not dynamic_src else d, DynamicView):
        raise kernel_error(f"nisa.{fn}: only the {'src' if dynamic_src else 'dst'} side may be "
                           f"dynamic")
    chk.same_elements(fn, ("src", s), ("dst", d))
    e = klr_engine(fn, eng, (engine.vector, engine.scalar, engine.gpsimd, engine.unknown))
    trace = active_trace()
    trace.emit(ast.TensorCopyDynamic(trace.access(d), trace.access(s), trace.access(view.offset_tile),
                                     view.stride, dynamic_src, klr_dtype(d.dtype),
                                     ast.Engine.dve if e is ast.Engine.unassigned else e))


def _legacy_src(fn: object, src: object, *, mask: object = None, dtype: object = None,
                engine: engine = engine.unknown) -> NkiTensor:
    """NKI 1.x: the copy in a new SBUF tile (dtype= or src's)."""
    if mask is not None:
        raise kernel_error("nisa.tensor_copy_dynamic_src: mask= is not supported")
    s = chk.tile("tensor_copy_dynamic_src", "src", src)
    out = active_trace().allocate(s.shape, s.dtype if dtype is None else canonical_dtype(dtype),
                                  "sbuf", assigned_name())
    _copy("tensor_copy_dynamic_src", out, s, True, engine)
    return out


@two_forms(_legacy_src)
def tensor_copy_dynamic_src(dst: object, src: object, engine: engine = engine.unknown,
                            name: str | None = None) -> None:
    """dst = src, src at a dynamic offset within each partition (module docstring)."""
    _copy("tensor_copy_dynamic_src", dst, src, True, engine)


def tensor_copy_dynamic_dst(dst: object, src: object, engine: engine = engine.unknown,
                            name: str | None = None, *, mask: object = None,
                            dtype: object = None) -> None:
    """dst (at a dynamic offset within each partition) = src (module docstring)."""
    if mask is not None:
        raise kernel_error("nisa.tensor_copy_dynamic_dst: mask= is not supported")
    if dtype is not None and isinstance(dst, NkiTensor) and canonical_dtype(dtype) != dst.dtype:
        raise kernel_error(f"nisa.tensor_copy_dynamic_dst: dtype {dtype!r} must be dst's "
                           f"{dst.dtype}")
    _copy("tensor_copy_dynamic_dst", dst, src, False, engine)


# the operator behind `offsets[0, i] + iy` on the plain-data tensor (tilecc/nki/operators.py)
install("dynamic_index", dynamic_index)
