"""NKI's tile-level API: `nl.exp(x)`, `nl.subtract(a, b)`, `nl.sum(x, axis=1)`, `a / b` ...

Contract: each call computes a new SBUF tile (named after the variable it is assigned to)
with exactly one nki.isa instruction (nl.mod excepted, below), so the KLR it traces is what
the same kernel written with nki.isa would give:
- unary activation functions (nl.exp, nl.square, nl.rsqrt ...) -> activation; nl.invert ->
  tensor_scalar;
- binary ALU ops: two tiles are lined up by NKI's broadcasting (tilecc/nki/broadcasting.py);
  tiles of one shape -> tensor_tensor; a tile and a number or a float32 column (one element
  per partition) -> tensor_scalar (reverse0 when the tile is the right operand); a bf16 /
  fp16 / integer column (which tensor_scalar does not take) -> tensor_tensor reading the
  column repeated along the free dims;
- reductions nl.sum / nl.max / nl.min / nl.prod / nl.mean -> tensor_reduce over the given
  trailing free axes (mean then scales by 1/n with tensor_scalar); the result keeps the
  partition dim, and a [P, 1] column when every free axis is reduced.
- nl.mod(x, y) is Python's modulus (the sign of the divisor, NKI docs "equivalent to the
  Python modulus x % y"), while the ALU mod is C fmod (the sign of the dividend): the fmod
  remainder r gets the divisor added where it is nonzero and of the other sign, numpy.mod's
  own adjustment. With a number divisor, whose sign is known while tracing, that is
  r + (r < 0) * y (y > 0; r > 0 for y < 0): three instructions; a tile divisor takes eight.
The result dtype is `dtype`, else the tile operand's (float32 when two tiles differ);
comparisons default to nl.bool_ (uint8) as NKI's. A `mask=` restricts the instruction to its
box and the result is a full-shape tile written there only; without a mask an operand made by
a masked instruction restricts it to the box it holds (tilecc/nki/masking.py). Operands must
be on chip: load HBM tensors first.
"""

from __future__ import annotations


from tilecc.nki import isa, masking
from tilecc.nki.broadcasting import line_up, repeated_column
from tilecc.nki.dtypes import canonical_dtype, plain_number
from tilecc.nki.errors import kernel_error
from tilecc.nki.explicit_ap import explicit_access
from tilecc.nki.isa_tensor_engine import write_into
from tilecc.nki.loop_reduce import LoopFold, fold_into
from tilecc.nki.operators import install
from tilecc.nki.ops import ALL_OPS, BITVEC_ALU, Op
from tilecc.nki.shapes import reduce_axes, reduced_shape
from tilecc.nki.tensor import Dim, NkiTensor
from tilecc.nki.tracer import active_trace, allowed_starts, assigned_name, masked_off, skip_masked_off

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


def apply(op: Op, args: tuple[object, ...], kwargs: dict[str, object], name: str) -> NkiTensor:
    """`nl.<op>(x[, y], dtype=None, mask=None)` on tiles."""
    what = f"nl.{op.name}"
    if masked_off(kwargs.get("mask")):
        rest = {key: value for key, value in kwargs.items() if key != "mask"}
        return skip_masked_off(lambda: apply(op, args, rest, name))
    dtype, mask = kwargs.pop("dtype", None), kwargs.pop("mask", None)
    if kwargs:
        raise kernel_error(f"{what}: unexpected argument(s) {', '.join(kwargs)}")
    if len(args) == 2 and op.name == "mod":
        return floor_mod(args[0], args[1], dtype, name, mask)
    if len(args) == 1 and (op.unary or op.act is not None):
        return unary(op, args[0], dtype, name, mask)
    if len(args) == 2 and op.alu is not None and not op.unary:
        return binary(op, args[0], args[1], dtype, name, mask)
    kind = "one tile" if op.unary or op.alu is None else "two operands"
    raise kernel_error(f"{what} takes {kind}, got {len(args)} argument(s)")


def unary(op: Op, x: object, dtype: object, name: str, mask: object = None) -> NkiTensor:
    what = f"nl.{op.name}"
    if not isinstance(x, NkiTensor):
        raise kernel_error(f"{what}: expected a tile, got {x!r}")
    tile = _on_chip(what, x)
    box = masking.call_box(what, mask, tile)
    out, dst = masking.result_tile(tile.shape, _dtype(what, dtype, tile.dtype), name, box)
    data = masking.cut(tile, box, tile.shape)
    if op.act is not None:
        isa.activation(dst=dst, op=op, data=data)
    else:
        isa.tensor_scalar(dst=dst, data=data, op0=op, operand0=0)
    return out


def binary(op: Op, x: object, y: object, dtype: object, name: str, mask: object = None) -> NkiTensor:
    what = f"nl.{op.name}"
    tiles = [v for v in (x, y) if isinstance(v, NkiTensor)]
    for tile in tiles:
        _on_chip(what, tile)
    if not tiles:
        raise kernel_error(f"{what}: at least one operand must be a tile")
    default = "bool_" if op.name in _COMPARISONS else (
        tiles[0].dtype if all(t.dtype == tiles[0].dtype for t in tiles) else "float32")
    operand: object   # a column tile or a scalar
    if len(tiles) == 2:
        lined = line_up(what, tiles[0], tiles[1])
        if lined.column is None:
            a, b, shape = lined.first, lined.second, lined.shape
            box = masking.call_box(what, mask, a, b)
            out, dst = masking.result_tile(shape, _dtype(what, dtype, default), name, box)
            isa.tensor_tensor(dst=dst, data1=masking.cut(a, box, shape),
                              data2=masking.cut(b, box, shape), op=op)
            return out
        reverse = lined.column == 0
        data, operand = (lined.second, lined.first) if reverse else (lined.first, lined.second)
    else:
        data = tiles[0]
        reverse = data is y
        operand = x if reverse else y
    if isinstance(operand, NkiTensor) and operand.dtype != "float32" and op.alu not in BITVEC_ALU:
        # tensor_scalar takes a float32 [P, 1] tile only: a bf16 / fp16 / int column is read
        # by tensor_tensor instead, repeated along the free dims (a step-0 access)
        column = repeated_column(operand, data.shape)
        box = masking.call_box(what, mask, data, column)
        out, dst = masking.result_tile(data.shape, _dtype(what, dtype, default), name, box)
        first, second = (column, data) if reverse else (data, column)
        isa.tensor_tensor(dst=dst, data1=masking.cut(first, box, data.shape),
                          data2=masking.cut(second, box, data.shape), op=op)
        return out
    box = masking.call_box(what, mask, data, operand)
    out, dst = masking.result_tile(data.shape, _dtype(what, dtype, default), name, box)
    isa.tensor_scalar(dst=dst, data=masking.cut(data, box, data.shape), op0=op,
                      operand0=masking.cut(operand, box, data.shape), reverse0=reverse)
    return out


def floor_mod(x: object, y: object, dtype: object, name: str, mask: object = None) -> NkiTensor:
    """nl.mod(x, y): the fmod remainder, plus y where it is nonzero and its sign differs
    from y's (module docstring); the mask restricts the remainder, and the steps after it
    compute on the box the remainder holds."""
    rem = binary(ALL_OPS["fmod"], x, y, dtype, f"{name}_fmod" if name else "", mask)
    if isinstance(y, NkiTensor):
        def flag(op: str, a: object, b: object) -> NkiTensor:
            return binary(ALL_OPS[op], a, b, "float32", "")
        flip = flag("not_equal", flag("less", rem, 0.0), flag("less", y, 0.0))
        take = flag("multiply", flip, flag("not_equal", rem, 0.0))
        step = binary(ALL_OPS["multiply"], take, y, rem.dtype, "")
    elif isinstance(y, (int, float)) and y != 0 and y == y:
        box = masking.call_box("nl.mod", None, rem)
        step, dst = masking.result_tile(rem.shape, rem.dtype, "", box)
        isa.tensor_scalar(dst=dst, data=masking.cut(rem, box, rem.shape),
                          op0=ALL_OPS["less" if y > 0 else "greater"], operand0=0.0,
                          op1=ALL_OPS["multiply"], operand1=y)
    else:   # x mod 0 or NaN: the remainder is already NaN
        return rem
    return binary(ALL_OPS["add"], rem, step, dtype, name)


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
    full = _on_chip(what, x)
    axes = reduce_axes(what, full, axis)
    box = masking.call_box(what, mask, full)
    tile = masking.cut(full, box, full.shape)
    out, dst = masking.result_tile(reduced_shape(what, full, axes, keepdims),
                                   _dtype(what, dtype, full.dtype), name,
                                   masking.reduced_box(box, axes, keepdims))
    kept = [d for i, d in enumerate(tile.dims) if i not in axes]
    view = NkiTensor(tile.alloc, tile.offset, tile.par_start,
                     (*kept, *(tile.dims[i] for i in axes)))
    trailing = list(range(len(kept), tile.ndim))
    isa.tensor_reduce(dst=dst, op=ALL_OPS[_REDUCE_OPS[kind]], data=view, axis=trailing,
                      keepdims=keepdims)
    if kind == "mean":
        count = 1
        for a in axes:
            count *= tile.shape[a]
        isa.tensor_scalar(dst=dst, data=dst, op0=ALL_OPS["multiply"], operand0=1.0 / count)
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


def _engine_reaches(view: NkiTensor) -> bool:
    """A compute engine can access `view`: it is on chip and starts on a partition the
    engines' start rule allows (tracer.allowed_starts). `assign` copies a view it cannot reach
    with a DMA instead of tensor_copy, and fills one (`t[i, j] = 5` in a loop over partitions)
    by a memset of a new tile at partition 0 and a DMA of it into place."""
    return view.alloc.on_chip and view.par_start in allowed_starts(view.partitions)


def assign(dst: NkiTensor, value: object) -> None:
    """`dst[...] = value`: a copy (tensor_copy on chip, dma_copy when HBM is involved) or a
    fill (memset); a masked instruction's tile copies the box it wrote; an nl.loop_reduce
    folds into dst (tilecc/nki/loop_reduce.py)."""
    if isinstance(value, LoopFold):
        fold_into(dst, value)
        return
    value = plain_number(value)
    if isinstance(value, NkiTensor) and value.alloc.masked_off:
        return
    if isinstance(value, NkiTensor) and value.same_view(dst):
        return   # `t[...] += x` assigns back the view `+=` updated in place
    if write_into(dst, value):
        return   # a fresh 1.x matmul product now writes dst itself
    if isinstance(value, NkiTensor) and (box := masking.written_box(value)) is not None \
            and dst.shape == value.shape and all(low < high for low, high in box):
        dst, value = dst.restricted(box), value.restricted(box)
    if isinstance(value, NkiTensor):
        if _engine_reaches(dst) and _engine_reaches(value):
            isa.tensor_copy(dst=dst, src=value)
        else:
            isa.dma_copy(dst=dst, src=value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if _engine_reaches(dst) or not dst.alloc.on_chip:
            isa.memset(dst=dst, value=value)
        else:   # `indices[i, j] = 5` on partition i: fill a tile at partition 0, DMA it there
            filled = new_tile(dst.shape, dst.dtype, "")
            isa.memset(dst=filled, value=value)
            isa.dma_copy(dst=dst, src=filled)
    else:
        raise kernel_error(f"cannot assign {value!r} to {dst!r}: expected a tensor or a number")


# the operators of the plain-data types (tilecc/nki/operators.py), named after the kernel's variable
install("binary", lambda name, left, right: binary(ALL_OPS[name], left, right, None, assigned_name()))
install("apply", lambda op, args, kwargs: apply(op, args, kwargs, assigned_name()))
install("assign", assign)
install("broadcast_partitions", lambda tile, shape: broadcast_partitions(tile, shape, assigned_name()))
install("explicit_access", explicit_access)
