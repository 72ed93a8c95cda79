"""NKI's tile-level API: `nl.exp(x)`, `nl.subtract(a, b)`, `nl.sum(x, axis=1)`, `a / b` ...

Contract: each call computes a new SBUF tile (named after the variable it is assigned to)
with exactly one nki.isa instruction, so the KLR it traces is what the same kernel written
with nki.isa would give:
- unary activation functions (nl.exp, nl.square, nl.rsqrt ...) -> activation; nl.invert ->
  tensor_scalar;
- binary ALU ops: two tiles of one shape -> tensor_tensor; a tile and a number or a [P, 1]
  column -> tensor_scalar (reverse0 when the tile is the right operand);
- reductions nl.sum / nl.max / nl.min / nl.prod / nl.mean -> tensor_reduce over the given
  trailing free axes (mean then scales by 1/n with tensor_scalar); the result keeps the
  partition dim, and a [P, 1] column when every free axis is reduced.
The result dtype is `dtype`, else the tile operand's (float32 when two tiles differ);
comparisons default to nl.bool_ (uint8) as NKI's. A `mask=` that keeps the leading
partitions (a partial last tile) cuts every tile operand to them; operands must be on chip:
load HBM tensors first.
"""

from __future__ import annotations

from tilecc.nki import isa
from tilecc.nki.dtypes import canonical_dtype
from tilecc.nki.errors import kernel_error
from tilecc.nki.ops import ALL_OPS, Op
from tilecc.nki.indexing import mask_counts
from tilecc.nki.tensor import Dim, NkiTensor
from tilecc.nki.tracer import active_trace

_COMPARISONS = frozenset({"equal", "not_equal", "greater", "greater_equal", "less", "less_equal"})
_REDUCE_OPS = {"sum": "add", "max": "maximum", "min": "minimum", "prod": "multiply", "mean": "add"}


def new_tile(shape: tuple[int, ...], dtype: str, name: str) -> NkiTensor:
    return active_trace().allocate(shape, dtype, "sbuf", name)


def _on_chip(what: str, value: NkiTensor) -> NkiTensor:
    if not value.alloc.on_chip:
        raise kernel_error(f"{what}: {value!r} is in HBM; load it into a tile first (nl.load)")
    return value


def _dtype(what: str, dtype: object, default: str) -> str:
    if dtype is None:
        return default
    try:
        return canonical_dtype(dtype)
    except ValueError as err:
        raise kernel_error(f"{what}: {err}") from None


def _masked_operand(what: str, value: object, mask: object) -> object:
    """A tile operand cut to the partitions `mask` keeps (a partial last tile); masks that
    cut free axes of compute tiles are not supported."""
    counts = mask_counts(mask, what)
    if not counts or not isinstance(value, NkiTensor):
        return value
    if set(counts) != {0}:
        raise kernel_error(f"{what}: a mask on a compute tile may cut its partitions (grid axis 0) "
                           f"only")
    keep = counts[0]
    return value[0:keep] if value.partitions > keep else value


def cut_to(value: object, shape: tuple[int, ...]) -> object:
    """A tile cut to the leading `shape` of its dims (what a mask keeps of it), if larger."""
    if not isinstance(value, NkiTensor) or value.shape == shape or value.ndim != len(shape):
        return value
    if any(have < want for have, want in zip(value.shape, shape)):
        return value
    return value[tuple(slice(0, want) for want in shape)]


def apply(op: Op, args: tuple[object, ...], kwargs: dict[str, object], name: str) -> NkiTensor:
    """`nl.<op>(x[, y], dtype=None, mask=None)` on tiles."""
    what = f"nl.{op.name}"
    dtype, mask = kwargs.pop("dtype", None), kwargs.pop("mask", None)
    if kwargs:
        raise kernel_error(f"{what}: unexpected argument(s) {', '.join(kwargs)}")
    args = tuple(_masked_operand(what, a, mask) for a in args)
    if len(args) == 1 and (op.unary or op.act is not None):
        return unary(op, args[0], dtype, name)
    if len(args) == 2 and op.alu is not None and not op.unary:
        return binary(op, args[0], args[1], dtype, name)
    kind = "one tile" if op.unary or op.alu is None else "two operands"
    raise kernel_error(f"{what} takes {kind}, got {len(args)} argument(s)")


def unary(op: Op, x: object, dtype: object, name: str) -> NkiTensor:
    what = f"nl.{op.name}"
    if not isinstance(x, NkiTensor):
        raise kernel_error(f"{what}: expected a tile, got {x!r}")
    tile = _on_chip(what, x)
    out = new_tile(tile.shape, _dtype(what, dtype, tile.dtype), name)
    if op.act is not None:
        isa.activation(dst=out, op=op, data=tile)
    else:
        isa.tensor_scalar(dst=out, data=tile, op0=op, operand0=0)
    return out


def binary(op: Op, x: object, y: object, dtype: object, name: str) -> NkiTensor:
    what = f"nl.{op.name}"
    tiles = [v for v in (x, y) if isinstance(v, NkiTensor)]
    for tile in tiles:
        _on_chip(what, tile)
    if not tiles:
        raise kernel_error(f"{what}: at least one operand must be a tile")
    default = "bool_" if op.name in _COMPARISONS else (
        tiles[0].dtype if all(t.dtype == tiles[0].dtype for t in tiles) else "float32")
    if len(tiles) == 2:
        a, b = tiles
        if a.shape == b.shape or (a.partitions == b.partitions and a.free_elements == b.free_elements):
            out = new_tile(a.shape, _dtype(what, dtype, default), name)
            isa.tensor_tensor(dst=out, data1=a, data2=b, op=op)
            return out
        if b.partitions == a.partitions and b.free_elements == 1:
            data, operand, reverse = a, b, False
        elif a.partitions == b.partitions and a.free_elements == 1:
            data, operand, reverse = b, a, True
        else:
            raise kernel_error(f"{what}: shape mismatch: {list(a.shape)} and {list(b.shape)} are "
                               f"neither equal nor a tile and a [P, 1] column")
    else:
        data = tiles[0]
        reverse = data is y
        operand = x if reverse else y
    out = new_tile(data.shape, _dtype(what, dtype, default), name)
    isa.tensor_scalar(dst=out, data=data, op0=op, operand0=operand, reverse0=reverse)
    return out


def reduce(kind: str, x: object, axis: object, dtype: object, keepdims: bool, mask: object,
           name: str) -> NkiTensor:
    what = f"nl.{kind}"
    if not isinstance(x, NkiTensor):
        raise kernel_error(f"{what}: expected a tile, got {x!r}")
    tile = _on_chip(what, _masked_operand(what, x, mask))
    raw = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    if not raw or any(isinstance(a, bool) or not isinstance(a, int) for a in raw):
        raise kernel_error(f"{what}: axis must be an int or a list of ints, got {axis!r}")
    axes = sorted(a + tile.ndim if a < 0 else a for a in raw)
    if keepdims:
        shape = tuple(1 if i in axes else n for i, n in enumerate(tile.shape))
    else:
        shape = tuple(n for i, n in enumerate(tile.shape) if i not in axes) or (tile.partitions,)
        shape = shape if len(shape) > 1 else (shape[0], 1)
    out = new_tile(shape, _dtype(what, dtype, tile.dtype), name)
    isa.tensor_reduce(dst=out, op=ALL_OPS[_REDUCE_OPS[kind]], data=tile, axis=axes, keepdims=keepdims)
    if kind == "mean":
        count = 1
        for a in axes:
            count *= tile.shape[a] if 0 <= a < tile.ndim else 1
        isa.tensor_scalar(dst=out, data=out, op0=ALL_OPS["multiply"], operand0=1.0 / count)
    return out


def broadcast_partitions(tile: NkiTensor, shape: tuple[int, ...], name: str) -> NkiTensor:
    """A new tile of `shape` whose partitions all hold the single partition of `tile`: one
    DMA copy that reads the partition P times (a step-0 free pair)."""
    repeat = shape[0]
    source = NkiTensor(tile.alloc, tile.offset, tile.par_start,
                       (tile.dims[0], Dim(0, repeat), *tile.dims[1:]))
    out = new_tile(shape, tile.dtype, name)
    isa.dma_copy(dst=out, src=source)
    return out
