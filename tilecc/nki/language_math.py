"""nki.language functions that no single instruction computes, lowered to a few existing ones:
nl.where, nl.floor / ceil / trunc, nl.cos / tan, nl.softmax, nl.rms_norm, nl.all,
nl.abs_max / abs_min, nl.static_cast, nl.gather_flattened, and the buffer predicates nl.is_sbuf / is_psum /
is_hbm / is_on_chip (exported by tilecc.nki.language).

Pages: https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/
nki.language.where.html (and .floor, .ceil, .trunc, .cos, .tan, .softmax, .rms_norm, .all,
.abs_max, .abs_min, .static_cast, .is_sbuf ...). Each returns a new SBUF tile of `dtype`
(default: the input's) and computes in float32 as the engines do:
- where(c, x, y): y (a tile or a number) everywhere, then x copied where c != 0
  (tensor_copy_predicated); x, y, c of one shape (numbers broadcast).
- trunc(x) = x - fmod(x, 1); floor = trunc - (fmod(x, 1) < 0); ceil = trunc + (fmod > 0);
  |x| >= 2**23 (every such float is an integer, inf too) is copied unchanged; NaN stays
  NaN; a zero result is +0.
- cos(x) = sin(x + pi/2) and tan(x) = sin(x) / cos(x) on the Scalar Engine's sin (float32;
  like the hardware's, accurate for moderate |x|).
- softmax(x, axis) = exp(x - max) / sum(exp(x - max)) over the trailing free `axis`;
  rms_norm(x, w, axis, n, eps) = x * rsqrt(sum(x^2) / n + eps) * w; all(x, axis) = min of
  (x != 0) over axis; abs_max / abs_min = max / min of |x|, |y|; static_cast = tensor_copy
  (given a numpy array outside a kernel, numpy's astype to the dtype, ml_dtypes for bf16 / fp8);
  gather_flattened(data, indices) = nc_n_gather within each partition.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from tilecc.nki import isa, tile_ops
from tilecc.nki.dtypes import canonical_dtype, dtype_info, plain_number
from tilecc.nki.errors import kernel_error
from tilecc.nki.ops import ALL_OPS
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import assigned_name

_EXACT = float(2 ** 23)  # from here on every float32 is an integer
_HALF_PI = float(np.float32(math.pi / 2))  # immediates are float32 (KLR Float32)


def _tile(what: str, x: object) -> NkiTensor:
    if not isinstance(x, NkiTensor) or not x.alloc.on_chip:
        raise kernel_error(f"nl.{what}: expected a tile on chip (SBUF / PSUM), got {x!r}")
    return x


def _out(what: str, x: NkiTensor, dtype: object, name: str = "") -> NkiTensor:
    return tile_ops.new_tile(x.shape, tile_ops._dtype(f"nl.{what}", dtype, x.dtype), name or assigned_name())


def _ts(dst: NkiTensor, data: NkiTensor, op: str, value: object, op1: str | None = None,
        value1: object = None) -> NkiTensor:
    isa.tensor_scalar(dst=dst, data=data, op0=ALL_OPS[op], operand0=value,
                      op1=None if op1 is None else ALL_OPS[op1], operand1=value1)
    return dst


def _f32(x: NkiTensor, tag: str) -> NkiTensor:
    return tile_ops.new_tile(x.shape, "float32", f"{x.name}_{tag}")


def where(condition: object, x: object, y: object, dtype: object = None, mask: object = None) -> NkiTensor:
    """Elements of x where condition is nonzero, of y elsewhere."""
    cond = _tile("where", condition)
    like = x if isinstance(x, NkiTensor) else y if isinstance(y, NkiTensor) else cond
    default = like.dtype if isinstance(like, NkiTensor) and like is not cond else "float32"
    out = tile_ops.new_tile(cond.shape, tile_ops._dtype("nl.where", dtype, default), assigned_name())
    for arg, value in (("x", x), ("y", y)):
        if isinstance(value, NkiTensor) and value.shape != cond.shape:
            raise kernel_error(f"nl.where: {arg} {list(value.shape)} and condition "
                               f"{list(cond.shape)} must have the same shape")
    _fill(out, y)
    isa.tensor_copy_predicated(dst=out, src=_as(out, x), predicate=cond)
    return out


def _fill(out: NkiTensor, value: object) -> None:
    if isinstance(value, NkiTensor):
        isa.tensor_copy(dst=out, src=value)
    else:
        isa.memset(dst=out, value=plain_number(value))


def _as(out: NkiTensor, value: object) -> object:
    """A tile operand in out's dtype (copy_predicated moves elements of one dtype)."""
    if not isinstance(value, NkiTensor) or value.dtype == out.dtype:
        return value
    copy = tile_ops.new_tile(value.shape, out.dtype, f"{value.name}_cast")
    isa.tensor_copy(dst=copy, src=value)
    return copy


def _rounded(what: str, x: object, dtype: object, step: str | None) -> NkiTensor:
    """trunc (step None), floor (step 'less': subtract 1 where the remainder < 0) or ceil
    (step 'greater': add 1 where it is > 0)."""
    t = _tile(what, x)
    rem = _ts(_f32(t, "frac"), t, "fmod", 1.0)
    whole = tile_ops.new_tile(t.shape, "float32", f"{t.name}_trunc")
    isa.tensor_tensor(dst=whole, data1=t, data2=rem, op=ALL_OPS["subtract"])
    if step is not None:
        carry = _ts(_f32(t, "carry"), rem, step, 0.0)
        isa.tensor_tensor(dst=whole, data1=whole, data2=carry,
                          op=ALL_OPS["subtract" if step == "less" else "add"])
    big = tile_ops.new_tile(t.shape, "uint8", f"{t.name}_integral")
    _ts(big, t, "abs", 0.0, "greater_equal", _EXACT)
    isa.tensor_copy_predicated(dst=whole, src=_as(whole, t), predicate=big)
    out = _out(what, t, dtype)
    isa.tensor_copy(dst=out, src=whole)
    return out


def trunc(x: object, dtype: object = None, mask: object = None) -> NkiTensor:
    return _rounded("trunc", x, dtype, None)


def floor(x: object, dtype: object = None, mask: object = None) -> NkiTensor:
    return _rounded("floor", x, dtype, "less")


def ceil(x: object, dtype: object = None, mask: object = None) -> NkiTensor:
    return _rounded("ceil", x, dtype, "greater")


def _sin_of(t: NkiTensor, shift: float, name: str) -> NkiTensor:
    moved = _ts(_f32(t, "shifted"), t, "add", shift) if shift else t
    out = tile_ops.new_tile(t.shape, "float32", name)
    isa.activation(dst=out, op=ALL_OPS["sin"], data=moved)
    return out


def cos(x: object, dtype: object = None, mask: object = None) -> NkiTensor:
    t = _tile("cos", x)
    out = _out("cos", t, dtype)
    isa.tensor_copy(dst=out, src=_sin_of(t, _HALF_PI, f"{t.name}_cos"))
    return out


def tan(x: object, dtype: object = None, mask: object = None) -> NkiTensor:
    t = _tile("tan", x)
    out = _out("tan", t, dtype)
    isa.tensor_tensor(dst=out, data1=_sin_of(t, 0.0, f"{t.name}_sin"),
                      data2=_sin_of(t, _HALF_PI, f"{t.name}_cos"), op=ALL_OPS["divide"])
    return out


def softmax(x: object, axis: object = -1, dtype: object = None, compute_dtype: object = None,
            mask: object = None) -> NkiTensor:
    t = _tile("softmax", x)
    peak = tile_ops.reduce("max", t, axis, "float32", True, None, f"{t.name}_max")
    shifted = tile_ops.binary(ALL_OPS["subtract"], t, peak, "float32", f"{t.name}_shifted")
    exps = tile_ops.unary(ALL_OPS["exp"], shifted, "float32", f"{t.name}_exp")
    total = tile_ops.reduce("sum", exps, axis, "float32", True, None, f"{t.name}_sum")
    return tile_ops.binary(ALL_OPS["divide"], exps, total, tile_ops._dtype("nl.softmax", dtype, t.dtype),
                           assigned_name())


def rms_norm(x: object, w: object, axis: object, n: object, epsilon: float = 1e-6, dtype: object = None,
             compute_dtype: object = None, mask: object = None) -> NkiTensor:
    t, weight = _tile("rms_norm", x), _tile("rms_norm", w)
    count = plain_number(n)
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        raise kernel_error(f"nl.rms_norm: n must be a positive integer, got {n!r}")
    squares = tile_ops.unary(ALL_OPS["square"], t, "float32", f"{t.name}_sq")
    total = tile_ops.reduce("sum", squares, axis, "float32", True, None, f"{t.name}_sumsq")
    scale = _ts(tile_ops.new_tile(total.shape, "float32", f"{t.name}_rrms"), total, "multiply",
                float(np.float32(1.0 / count)), "add", float(np.float32(epsilon)))
    _ts(scale, scale, "rsqrt", 0.0)
    normed = tile_ops.binary(ALL_OPS["multiply"], t, scale, "float32", f"{t.name}_normed")
    return tile_ops.binary(ALL_OPS["multiply"], normed, weight, tile_ops._dtype("nl.rms_norm", dtype, t.dtype),
                           assigned_name())


def all(x: object, axis: object, dtype: object = None, mask: object = None) -> NkiTensor:  # noqa: A001
    t = _tile("all", x)
    nonzero = _ts(_f32(t, "nonzero"), t, "not_equal", 0.0)
    return tile_ops.reduce("min", nonzero, axis, "uint8" if dtype is None else dtype, False, None,
                           assigned_name())


def _abs_pair(what: str, x: object, y: object, op: str, dtype: object) -> NkiTensor:
    a, b = _tile(what, x), _tile(what, y)
    ax = tile_ops.unary(ALL_OPS["abs"], a, "float32", f"{a.name}_abs")
    bx = tile_ops.unary(ALL_OPS["abs"], b, "float32", f"{b.name}_abs")
    return tile_ops.binary(ALL_OPS[op], ax, bx, tile_ops._dtype(f"nl.{what}", dtype, a.dtype), assigned_name())


def abs_max(x: object, y: object, dtype: object = None) -> NkiTensor:
    """max(|x|, |y|) elementwise, a new tile."""
    return _abs_pair("abs_max", x, y, "maximum", dtype)


def abs_min(x: object, y: object, dtype: object = None) -> NkiTensor:
    """min(|x|, |y|) elementwise, a new tile."""
    return _abs_pair("abs_min", x, y, "minimum", dtype)


def static_cast(input_data: object, dtype: object) -> object:
    """A tile converted to dtype (tensor_copy); on the host, a numpy array converted the way
    a kernel input of that dtype holds it (test drivers prepare bf16 inputs this way)."""
    if not isinstance(input_data, NkiTensor) and hasattr(input_data, "dtype"):
        return np.asarray(input_data).astype(dtype_info(canonical_dtype(dtype)).numpy)
    t = _tile("static_cast", input_data)
    out = _out("static_cast", t, dtype)
    isa.tensor_copy(dst=out, src=t)
    return out


def gather_flattened(data: object, indices: object, axis: int = 0, dtype: object = None,
                     mask: object = None) -> NkiTensor:
    """result[p, j...] = data[p, flat(indices[p, j...])] within each partition (nc_n_gather);
    integer indices of another dtype are first converted to uint32."""
    d, i = _tile("gather_flattened", data), _tile("gather_flattened", indices)
    if i.dtype != "uint32":
        converted = tile_ops.new_tile(i.shape, "uint32", f"{i.name}_u32")
        isa.tensor_copy(dst=converted, src=i)
        i = converted
    gathered = tile_ops.new_tile(i.shape, d.dtype, assigned_name() if dtype is None else f"{d.name}_gathered")
    isa.nc_n_gather(dst=gathered, data=d, indices=i)
    if dtype is None:
        return gathered
    out = _out("gather_flattened", gathered, dtype)
    isa.tensor_copy(dst=out, src=gathered)
    return out


def _buffer_of(value: object) -> str:
    return value.buffer if isinstance(value, NkiTensor) else str(value)


def is_sbuf(buffer: object) -> bool:
    return _buffer_of(buffer) == "sbuf"


def is_psum(buffer: object) -> bool:
    return _buffer_of(buffer) == "psum"


def is_hbm(buffer: object) -> bool:
    return _buffer_of(buffer) in ("hbm", "shared_hbm", "private_hbm")


def is_on_chip(buffer: object) -> bool:
    return _buffer_of(buffer) in ("sbuf", "psum")
