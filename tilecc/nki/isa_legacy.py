"""The tile-returning form of nki.isa calls (NKI 1.x, still what most published kernels use).

Contract: `two_forms(legacy)` wraps an NKI 2.x instruction `fn(dst, ...)`. A call is the 2.x
form when it binds to fn's signature with a tile as `dst`, tiles in the data roles and
operators in the op roles; otherwise it is the 1.x form, which takes no dst (`b =
nisa.tensor_scalar(a, np.subtract, 1.0)`, `nisa.activation(op=nl.exp, data=a)`,
`nisa.tensor_reduce(np.add, a, axis=[1])`, `nisa.memset((128, 128), 0.2, nl.float32)`,
`nisa.iota(nl.arange(512)[None, :], dtype=np.int32)`): `legacy(fn, ...)` allocates a new
SBUF result tile (dtype= or the input's dtype), calls fn with it as dst and returns it.
`mask=` restricts the call to its box: the result has the full shape and is written there
only (tilecc/nki/masking.py). Signatures follow the
NKI 1.x docstrings (aws-neuron-sdk general/nki/api/nki/isa/__init__.py).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from tilecc.nki.dtypes import canonical_dtype
from tilecc.nki.errors import kernel_error
from tilecc.nki.indexing import IndexExpr
from tilecc.nki.ops import resolve_op
from tilecc.nki import masking
from tilecc.nki.masking import DimBox
from tilecc.nki.shapes import new_tensor, reduce_axes, reduced_shape
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import active_trace, assigned_name, masked_off, skip_masked_off

_OP_ROLES = ("op", "op0", "op1")
_TILE_ROLES = ("data", "data0", "data1", "data2", "src", "src_buffer", "index")


@functools.cache
def _signature(fn: Callable[..., object]) -> inspect.Signature:
    """inspect.signature, once per function: it costs more than tracing the call."""
    return inspect.signature(fn)


def _is_dst_form(fn: Callable[..., None], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    try:
        bound = _signature(fn).bind(*args, **kwargs).arguments
    except TypeError:
        return False
    if not isinstance(bound.get("dst"), NkiTensor):
        return False
    if any(role in bound and resolve_op(bound[role]) is None and bound[role] is not None
           for role in _OP_ROLES):
        return False
    return not any(role in bound and not isinstance(bound[role], NkiTensor) for role in _TILE_ROLES)


def two_forms(legacy: Callable[..., NkiTensor]) -> Callable[[Callable[..., None]], Callable[..., Any]]:
    def wrap(fn: Callable[..., None]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            if "dst" in kwargs or _is_dst_form(fn, args, kwargs):
                return fn(*args, **kwargs)
            try:
                _signature(legacy).bind(fn, *args, **kwargs)
            except TypeError as err:
                raise kernel_error(f"nisa.{fn.__name__}: {err}; expected {fn.__name__}"
                                   f"({_plain_signature(fn, 0)}) or the tile-returning form "
                                   f"{fn.__name__}({_plain_signature(legacy, 1)})") from None
            if masked_off(kwargs.get("mask")):
                rest = {key: value for key, value in kwargs.items() if key != "mask"}
                return skip_masked_off(lambda: legacy(fn, *args, **rest))
            return legacy(fn, *args, **kwargs)
        return call
    return wrap


def _plain_signature(fn: Callable[..., object], skip: int) -> str:
    """`dst, data1, data2, op, engine=engine.unknown`: parameters as a kernel author writes them."""
    parts: list[str] = []
    for param in list(inspect.signature(fn).parameters.values())[skip:]:
        if param.kind is param.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        default = param.default
        if default is param.empty:
            parts.append(param.name)
        else:
            shown = f"{type(default).__name__}.{default.name}" if hasattr(default, "name") and \
                hasattr(type(default), "__members__") else repr(default)
            parts.append(f"{param.name}={shown}")
    return ", ".join(parts)


def _dtype(fn: Callable[..., None], dtype: object, default: str) -> str:
    if dtype is None:
        return default
    try:
        return canonical_dtype(dtype)
    except ValueError as err:
        raise kernel_error(f"nisa.{fn.__name__}: {err}") from None


def _tile(fn: Callable[..., None], arg: str, value: object, mask: object,
          *others: object) -> tuple[NkiTensor, DimBox | None]:
    """The data operand and the box the call computes (tilecc/nki/masking.py)."""
    if not isinstance(value, NkiTensor):
        raise kernel_error(f"nisa.{fn.__name__}: {arg} must be a tile, got {value!r}")
    return value, masking.call_box(f"nisa.{fn.__name__}", mask, value, *others)


def _result(shape: tuple[int, ...], dtype: str, box: DimBox | None) -> tuple[NkiTensor, NkiTensor]:
    """A new full-shape SBUF result tile and the part of it the call writes."""
    return masking.result_tile(shape, dtype, assigned_name(), box)


def _cut(value: object, box: DimBox | None, data: NkiTensor) -> object:
    """An operand restricted to the call's box (given on `data`'s dims)."""
    return masking.cut(value, box, data.shape)


# ---------------------------------------------------------------- 1.x signatures

def activation(fn: Callable[..., None], op: object, data: object, *, bias: object = None,
               scale: object = 1.0, reduce_op: object = None, reduce_res: object = None,
               reduce_cmd: object = None, mask: object = None, dtype: object = None) -> NkiTensor:
    """NKI 1.x activation (nki.isa.activation.html of 2.26): the reduce_op / reduce_res /
    reduce_cmd row reduction as the 2.x form's."""
    x, box = _tile(fn, "data", data, mask, bias, scale)
    out, dst = _result(x.shape, _dtype(fn, dtype, x.dtype), box)
    extra = {} if reduce_cmd is None else {"reduce_cmd": reduce_cmd}
    fn(dst=dst, op=op, data=_cut(x, box, x), bias=_cut(bias, box, x), scale=_cut(scale, box, x),
       reduce_op=reduce_op, reduce_res=_cut(reduce_res, box, x), **extra)
    return out


def activation_reduce(fn: Callable[..., None], op: object, data: object, *, reduce_op: object,
                      reduce_res: object, bias: object = None, scale: object = 1.0, mask: object = None,
                      dtype: object = None) -> NkiTensor:
    x, box = _tile(fn, "data", data, mask, bias, scale)
    out, dst = _result(x.shape, _dtype(fn, dtype, x.dtype), box)
    fn(dst=dst, op=op, data=_cut(x, box, x), reduce_op=reduce_op,
       reduce_res=_cut(reduce_res, box, x), bias=_cut(bias, box, x), scale=_cut(scale, box, x))
    return out


def tensor_tensor(fn: Callable[..., None], data1: object, data2: object, op: object, *,
                  dtype: object = None, mask: object = None, engine: object = None) -> NkiTensor:
    a, box = _tile(fn, "data1", data1, mask, data2)
    if not isinstance(data2, NkiTensor):
        raise kernel_error(f"nisa.{fn.__name__}: data2 must be a tile, got {data2!r}")
    default = a.dtype if a.dtype == data2.dtype else "float32"
    out, dst = _result(a.shape, _dtype(fn, dtype, default), box)
    fn(dst=dst, data1=_cut(a, box, a), data2=_cut(data2, box, a), op=op,
       **({} if engine is None else {"engine": engine}))
    return out


def tensor_scalar(fn: Callable[..., None], data: object, op0: object, operand0: object,
                  reverse0: bool = False, op1: object = None, operand1: object = None,
                  reverse1: bool = False, *, dtype: object = None, mask: object = None,
                  engine: object = None) -> NkiTensor:
    x, box = _tile(fn, "data", data, mask, operand0, operand1)
    out, dst = _result(x.shape, _dtype(fn, dtype, x.dtype), box)
    fn(dst=dst, data=_cut(x, box, x), op0=op0, operand0=_cut(operand0, box, x), reverse0=reverse0,
       op1=op1, operand1=_cut(operand1, box, x), reverse1=reverse1,
       **({} if engine is None else {"engine": engine}))
    return out


def tensor_scalar_reduce(fn: Callable[..., None], *, data: object, op0: object, operand0: object,
                         reduce_op: object, reduce_res: object, reverse0: bool = False,
                         dtype: object = None, mask: object = None) -> NkiTensor:
    x, box = _tile(fn, "data", data, mask, operand0)
    out, dst = _result(x.shape, _dtype(fn, dtype, x.dtype), box)
    fn(dst=dst, data=_cut(x, box, x), op0=op0, operand0=_cut(operand0, box, x),
       reduce_op=reduce_op, reduce_res=_cut(reduce_res, box, x), reverse0=reverse0)
    return out


def scalar_tensor_tensor(fn: Callable[..., None], *, data: object, op0: object, operand0: object,
                         op1: object, operand1: object, reverse0: bool = False, reverse1: bool = False,
                         dtype: object = None, mask: object = None) -> NkiTensor:
    x, box = _tile(fn, "data", data, mask, operand0, operand1)
    out, dst = _result(x.shape, _dtype(fn, dtype, x.dtype), box)
    fn(dst=dst, data=_cut(x, box, x), op0=op0, operand0=_cut(operand0, box, x), op1=op1,
       operand1=_cut(operand1, box, x), reverse0=reverse0, reverse1=reverse1)
    return out


def tensor_tensor_scan(fn: Callable[..., None], data0: object, data1: object, initial: object,
                       op0: object, op1: object, reverse0: bool = False, reverse1: bool = False, *,
                       dtype: object = None, mask: object = None) -> NkiTensor:
    a, box = _tile(fn, "data0", data0, mask, data1, initial)
    out, dst = _result(a.shape, _dtype(fn, dtype, a.dtype), box)
    fn(dst=dst, data0=_cut(a, box, a), data1=_cut(data1, box, a), initial=_cut(initial, box, a),
       op0=op0, op1=op1, reverse0=reverse0, reverse1=reverse1)
    return out


def tensor_reduce(fn: Callable[..., None], op: object, data: object, axis: object, *,
                  mask: object = None, dtype: object = None, negate: bool = False,
                  keepdims: bool = False) -> NkiTensor:
    what = f"nisa.{fn.__name__}"
    x, box = _tile(fn, "data", data, mask)
    shape = reduced_shape(what, x, axis, keepdims)
    axes = reduce_axes(what, x, axis)
    out, dst = _result(shape, _dtype(fn, dtype, x.dtype), masking.reduced_box(box, axes, keepdims))
    fn(dst=dst, op=op, data=_cut(x, box, x), axis=axis, negate=negate, keepdims=keepdims)
    return out


def tensor_partition_reduce(fn: Callable[..., None], op: object, data: object, *,
                            mask: object = None, dtype: object = None) -> NkiTensor:
    x, box = _tile(fn, "data", data, mask)
    out, dst = _result((1, *x.shape[1:]), _dtype(fn, dtype, x.dtype),
                       None if box is None else ((0, 1), *box[1:]))
    fn(dst=dst, op=op, data=_cut(x, box, x))
    return out


def tensor_copy(fn: Callable[..., None], src: object, *, mask: object = None, dtype: object = None,
                engine: object = None) -> NkiTensor:
    x, box = _tile(fn, "src", src, mask)
    out, dst = _result(x.shape, _dtype(fn, dtype, x.dtype), box)
    fn(dst=dst, src=_cut(x, box, x), **({} if engine is None else {"engine": engine}))
    return out


def reciprocal(fn: Callable[..., None], data: object, *, dtype: object = None,
               mask: object = None) -> NkiTensor:
    x, box = _tile(fn, "data", data, mask)
    out, dst = _result(x.shape, _dtype(fn, dtype, x.dtype), box)
    fn(dst=dst, data=_cut(x, box, x))
    return out


def memset(fn: Callable[..., None], shape: object, value: object, dtype: object, *,
           mask: object = None, engine: object = None) -> NkiTensor:
    out = new_tensor(shape, dtype, "sbuf", assigned_name())
    box = masking.call_box("nisa.memset", mask, out)
    out.alloc.written = box
    fn(dst=masking.cut(out, box, out.shape), value=value,
       **({} if engine is None else {"engine": engine}))
    return out


def iota(fn: Callable[..., None], expr: object, dtype: object, *, mask: object = None) -> NkiTensor:
    """`nisa.iota(offset + a * i_p + b * i_f, dtype)` over a [P, F...] index grid: element
    (p, f...) holds offset + a * p + sum(b_i * f_i) (KLR Iota: channel_multiplier a, one
    pattern pair [b_i, F_i] per free grid axis, at most 4)."""
    if not isinstance(expr, IndexExpr) or not 2 <= len(expr.sizes) <= 5:
        raise kernel_error(f"nisa.iota: expr must be an affine expression of a 2-d to 5-d nl.arange / "
                           f"nl.mgrid grid (as nl.arange(n)[None, :]), got {expr!r}")
    steps = dict(expr.terms)
    out = active_trace().allocate(tuple(expr.sizes), _dtype(fn, dtype, "int32"), "sbuf", assigned_name())
    box = masking.call_box("nisa.iota", mask, out)
    out.alloc.written = box
    dst = masking.cut(out, box, out.shape)
    # the instruction counts partitions and elements from its access's start: a box starting
    # at (p0, f0...) adds a * p0 + sum(b_i * f0_i), so each element still holds its own value
    starts = [low for low, _ in box] if box is not None else [0] * len(expr.sizes)
    fn(dst=dst, pattern=[[steps.get(axis, 0), dst.shape[axis]] for axis in range(1, len(expr.sizes))],
       offset=expr.offset + sum(steps.get(axis, 0) * start for axis, start in enumerate(starts)),
       channel_multiplier=steps.get(0, 0))
    return out
