"""NKI's tile-level API: `nl.exp(x)`, `nl.subtract(a, b)`, `nl.sum(x, axis=1)`, `a / b` ...

Contract: each call computes a new SBUF tile (named after the variable it is assigned to)
with exactly one nki.isa instruction (nl.mod excepted, below), so the KLR it traces is what
the same kernel written with nki.isa would give:
- unary activation functions (nl.exp, nl.square, nl.rsqrt ...) -> activation; nl.invert ->
  tensor_scalar;
- binary ALU ops: two tiles of one shape -> tensor_tensor; a tile and a number or a [P, 1]
  column -> tensor_scalar (reverse0 when the tile is the right operand); a one-partition
  tile against a P-partition tile is first broadcast to P partitions (numpy broadcasting);
- reductions nl.sum / nl.max / nl.min / nl.prod / nl.mean -> tensor_reduce over the given
  trailing free axes (mean then scales by 1/n with tensor_scalar); the result keeps the
  partition dim, and a [P, 1] column when every free axis is reduced.
- nl.mod(x, y) is Python's modulus (the sign of the divisor, NKI docs "equivalent to the
  Python modulus x % y"), while the ALU mod is C fmod (the sign of the dividend): the fmod
  remainder r gets the divisor added where it is nonzero and of the other sign, numpy.mod's
  own adjustment. With a number divisor, whose sign is known while tracing, that is
  r + (r < 0) * y (y > 0; r > 0 for y < 0): three instructions; a tile divisor takes eight.
The result dtype is `dtype`, else the tile operand's (float32 when two tiles differ);
comparisons default to nl.bool_ (uint8) as NKI's. A `mask=` that keeps the leading
entries of grid axes (a partial last tile) cuts every tile operand to them; operands must be on chip:
load HBM tensors first.
"""

from __future__ import annotations

from typing import overload

from tilecc.nki import isa
from tilecc.nki.dtypes import canonical_dtype
from tilecc.nki.errors import kernel_error
from tilecc.nki.ops import ALL_OPS, Op
from tilecc.nki.tensor import Dim, NkiTensor, mask_tile
from tilecc.nki.tracer import active_trace, masked_off, skip_masked_off

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


def _partial_result(out: NkiTensor, *operands: object) -> NkiTensor:
    """A result is a partial tile when an operand is one, or a mask cut an operand's partitions."""
    out.alloc.partial = any(isinstance(v, NkiTensor) and (v.alloc.partial or v.partitions > out.partitions)
                            for v in operands)
    return out


def _broadcast_partition(a: NkiTensor, b: NkiTensor) -> tuple[NkiTensor, NkiTensor]:
    """numpy broadcasting of a one-partition tile against a P-partition tile of the same rank
    (`row[1, F] * tile[P, F]`): the row is first copied to P partitions (broadcast_to)."""
    if a.ndim != b.ndim or (a.partitions == 1) == (b.partitions == 1):
        return a, b
    if a.partitions == 1:
        return a.broadcast_to((b.partitions, *a.shape[1:])), b
    return a, b.broadcast_to((a.partitions, *b.shape[1:]))


def _match_partial(what: str, a: NkiTensor, b: NkiTensor) -> tuple[NkiTensor, NkiTensor]:
    """A partial tile (cut by a mask) with a full tile: the full tile's leading partitions.
    NKI computes on whole tiles and stores only what the mask keeps; here the partial tile
    is cut, so the full one is cut to match."""
    if a.partitions == b.partitions:
        return a, b
    small, large = (a, b) if a.partitions < b.partitions else (b, a)
    if not small.alloc.partial:
        raise kernel_error(f"{what}: shape mismatch: {list(a.shape)} and {list(b.shape)} have "
                           f"different partition counts")
    cut = large[0:small.partitions]
    return (small, cut) if small is a else (cut, small)


@overload
def cut_to(value: NkiTensor, shape: tuple[int, ...]) -> NkiTensor: ...
@overload
def cut_to(value: object, shape: tuple[int, ...]) -> object: ...


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
    if masked_off(kwargs.get("mask")):
        rest = {key: value for key, value in kwargs.items() if key != "mask"}
        return skip_masked_off(lambda: apply(op, args, rest, name))
    dtype, mask = kwargs.pop("dtype", None), kwargs.pop("mask", None)
    if kwargs:
        raise kernel_error(f"{what}: unexpected argument(s) {', '.join(kwargs)}")
    cut = tuple(mask_tile(what, a, mask) for a in args)
    if len(cut) == 2 and op.name == "mod":
        out = floor_mod(cut[0], cut[1], dtype, name)
        out.alloc.partial = out.alloc.partial or _partial_result(out, *args).alloc.partial
        return out
    if len(cut) == 1 and (op.unary or op.act is not None):
        return _partial_result(unary(op, cut[0], dtype, name), *args)
    if len(cut) == 2 and op.alu is not None and not op.unary:
        out = binary(op, cut[0], cut[1], dtype, name)
        out.alloc.partial = out.alloc.partial or _partial_result(out, *args).alloc.partial
        return out
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
    return _partial_result(out, tile)


def binary(op: Op, x: object, y: object, dtype: object, name: str) -> NkiTensor:
    what = f"nl.{op.name}"
    tiles = [v for v in (x, y) if isinstance(v, NkiTensor)]
    for tile in tiles:
        _on_chip(what, tile)
    if not tiles:
        raise kernel_error(f"{what}: at least one operand must be a tile")
    default = "bool_" if op.name in _COMPARISONS else (
        tiles[0].dtype if all(t.dtype == tiles[0].dtype for t in tiles) else "float32")
    operand: object   # a [P, 1] tile or a scalar
    if len(tiles) == 2:
        a, b = _match_partial(what, *_broadcast_partition(*tiles))
        if a.shape == b.shape or (a.partitions == b.partitions and a.free_elements == b.free_elements):
            out = new_tile(a.shape, _dtype(what, dtype, default), name)
            isa.tensor_tensor(dst=out, data1=a, data2=b, op=op)
            return _partial_result(out, a, b, x, y)
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
    return _partial_result(out, data, operand)


def floor_mod(x: object, y: object, dtype: object, name: str) -> NkiTensor:
    """nl.mod(x, y): the fmod remainder, plus y where it is nonzero and its sign differs
    from y's (module docstring)."""
    rem = binary(ALL_OPS["fmod"], x, y, dtype, f"{name}_fmod" if name else "")
    if isinstance(y, NkiTensor):
        def flag(op: str, a: object, b: object) -> NkiTensor:
            return binary(ALL_OPS[op], a, b, "float32", "")
        flip = flag("not_equal", flag("less", rem, 0.0), flag("less", y, 0.0))
        take = flag("multiply", flip, flag("not_equal", rem, 0.0))
        step = binary(ALL_OPS["multiply"], take, y, rem.dtype, "")
    elif isinstance(y, (int, float)) and y != 0 and y == y:
        step = new_tile(rem.shape, rem.dtype, "")
        isa.tensor_scalar(dst=step, data=rem, op0=ALL_OPS["less" if y > 0 else "greater"], operand0=0.0,
                          op1=ALL_OPS["multiply"], operand1=y)
    else:   # x mod 0 or NaN: the remainder is already NaN
        return rem
    return binary(ALL_OPS["add"], rem, step, dtype, name)


def _reduce_axes(what: str, tile: NkiTensor, axis: object) -> list[int]:
    raw = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    ints = [a for a in raw if isinstance(a, int) and not isinstance(a, bool)]
    if not raw or len(ints) != len(raw):
        raise kernel_error(f"{what}: axis must be an int or a list of ints, got {axis!r}")
    axes = sorted({a + tile.ndim if a < 0 else a for a in ints})
    if axes[0] < 1 or axes[-1] >= tile.ndim:
        raise kernel_error(f"{what}: axis {raw} must name free dims 1..{tile.ndim - 1} of "
                           f"{tile!r} (the partition dim 0 is reduced by "
                           f"nisa.tensor_partition_reduce)")
    return axes


def reduced_shape(what: str, tile: NkiTensor, axis: object, keepdims: bool) -> tuple[int, ...]:
    """The shape of a reduction result: reduced dims dropped (kept as 1 with keepdims), and
    a [P, 1] column when every free dim is reduced."""
    axes = _reduce_axes(what, tile, axis)
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(tile.shape))
    shape = tuple(n for i, n in enumerate(tile.shape) if i not in axes)
    return shape if len(shape) > 1 else (shape[0], 1)


def reduce(kind: str, x: object, axis: object, dtype: object, keepdims: bool, mask: object,
           name: str) -> NkiTensor:
    """nl.sum / max / min / prod / mean over free axes. The instruction reduces trailing axes,
    so other axes (nl.max(t, axis=[2, 4])) are moved last first: a free dim of an access
    pattern is a (step, num) pair, and pairs can be listed in any order."""
    what = f"nl.{kind}"
    if masked_off(mask):
        return skip_masked_off(lambda: reduce(kind, x, axis, dtype, keepdims, None, name))
    if not isinstance(x, NkiTensor):
        raise kernel_error(f"{what}: expected a tile, got {x!r}")
    tile = _on_chip(what, mask_tile(what, x, mask))
    axes = _reduce_axes(what, tile, axis)
    out = new_tile(reduced_shape(what, tile, axes, keepdims), _dtype(what, dtype, tile.dtype), name)
    kept = [d for i, d in enumerate(tile.dims) if i not in axes]
    view = NkiTensor(tile.alloc, tile.offset, tile.par_start,
                     (*kept, *(tile.dims[i] for i in axes)))
    trailing = list(range(len(kept), tile.ndim))
    isa.tensor_reduce(dst=out, op=ALL_OPS[_REDUCE_OPS[kind]], data=view, axis=trailing,
                      keepdims=keepdims)
    if kind == "mean":
        count = 1
        for a in axes:
            count *= tile.shape[a]
        isa.tensor_scalar(dst=out, data=out, op0=ALL_OPS["multiply"], operand0=1.0 / count)
    return _partial_result(out, x)


def broadcast_partitions(tile: NkiTensor, shape: tuple[int, ...], name: str) -> NkiTensor:
    """A new tile of `shape` whose partitions all hold the single partition of `tile`: one
    DMA copy that reads the partition P times (a step-0 free pair)."""
    repeat = shape[0]
    source = NkiTensor(tile.alloc, tile.offset, tile.par_start,
                       (tile.dims[0], Dim(0, repeat), *tile.dims[1:]))
    out = new_tile(shape, tile.dtype, name)
    isa.dma_copy(dst=out, src=source)
    return out
