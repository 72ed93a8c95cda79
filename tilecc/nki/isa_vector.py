"""nki.isa statistics and selections: bn_stats, bn_aggr, select_reduce, tensor_copy_predicated,
affine_select and range_select (re-exported by tilecc.nki.isa).

Contract as tilecc/nki/isa.py: the NKI 2.x signature (`dst=`), and through `two_forms` the
NKI 1.x tile-returning one where NKI 1.x had it; each call checks the documented
restrictions at trace time and emits one KLR operator of klr.ast_vector. Pages:
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.isa.bn_stats.html
(and .bn_aggr, .select_reduce, .tensor_copy_predicated, .affine_select, .range_select;
1.x signatures from the 2.26 pages). Restrictions checked here: bn_stats <= 512 elements
per partition in, 6 out; bn_aggr a multiple of 3 in, 2 out; select_reduce integer
predicate, on_true not int32 / uint32, reduce_op max only, on_false a float or a [P, 1]
tile; tensor_copy_predicated uint8 / uint16 / uint32 predicate (tilecc also takes the
other integer and float predicate dtypes NKI 1.x kernels use: any nonzero value selects),
src / dst one dtype (a scalar src is first written to a tile); affine_select dst and
on_true in SBUF, pattern elements = elements per partition, float on_false_value;
range_select comparison ops, [P, 1] float32 bounds, reduce max.
The 1.x affine_select takes `pred=` as a comparison of grid indices (`iy < ix`): the
affine expression `lhs - rhs` over the grid compared with 0 by the same operator; its
on_true_tile may be a PSUM tile (a matmul result), copied to SBUF first by the Vector Engine.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from tilecc.klr import ast
from tilecc.klr import ast_vector as kv
from tilecc.nki import isa_legacy as legacy
from tilecc.nki import operands as chk
from tilecc.nki.dtypes import canonical_dtype, is_float, plain_number
from tilecc.nki.errors import kernel_error
from tilecc.nki.indexing import IndexExpr, Mask
from tilecc.nki.isa_enums import engine, klr_accum, klr_engine, reduce_cmd
from tilecc.nki.isa_legacy import two_forms
from tilecc.nki.ops import ALL_OPS, Op
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import active_trace, assigned_name, klr_dtype

FP32_MIN = float(np.finfo(np.float32).min)
_R = reduce_cmd
_COMPARE_OPS = frozenset({"is_equal", "is_lt", "is_le", "is_gt", "is_ge"})
_MASK_OPS = {"<": ALL_OPS["less"], "<=": ALL_OPS["less_equal"], ">": ALL_OPS["greater"],
             ">=": ALL_OPS["greater_equal"]}


def emit(op: object) -> None:
    """Append an operator of klr.ast_vector (registered into klr.ast's operator table)."""
    active_trace().emit(cast(ast.Stmt, op))


def ap(view: NkiTensor) -> ast.TensorRef:
    return active_trace().access(view)


def f32_operand(operand: ast.Operand) -> ast.Operand:
    """A float immediate rounded to the float32 the engines (and KLR's Float32) hold."""
    if isinstance(operand, ast.Immediate) and isinstance(operand.value, float):
        return ast.Immediate(float(np.float32(operand.value)))
    return operand


def f32_immediate(value: float) -> ast.Immediate:
    return ast.Immediate(float(np.float32(value)))


def no_mask(fn: str, mask: object, data: NkiTensor) -> None:
    """Instructions whose output is not the input's shape take no partial `mask=` box."""
    from tilecc.nki import masking
    if masking.call_box(f"nisa.{fn}", mask, data) is not None:
        raise kernel_error(f"nisa.{fn}: mask= restricting the tile is not supported (the output "
                           f"has another shape than the input); slice the tiles instead")


def masked_input(fn: str, mask: object, data: NkiTensor,
                 out_shape: tuple[int, ...], dtype: str) -> tuple[NkiTensor, NkiTensor, NkiTensor]:
    """The 1.x `mask=` of an instruction that reduces each partition of `data` to a fixed
    number of outputs (max8, bn_stats, ...): the input is read inside the mask's box, and the
    result tile of `out_shape` is written on the box's partitions only (all of its free
    elements). Returns (the input part read, the full result tile, its part written)."""
    from tilecc.nki import masking
    box = masking.call_box(f"nisa.{fn}", mask, data)
    out_box = None if box is None else (box[0], *((0, n) for n in out_shape[1:]))
    out, written = masking.result_tile(out_shape, dtype, assigned_name(), out_box)
    return masking.cut(data, box, data.shape), out, written


def legacy_options(fn: str, mask: object, dtype: object, dst: NkiTensor) -> None:
    """The NKI 1.x `mask=` / `dtype=` of instructions that take dst by reference: a mask that
    keeps the whole tile, a dtype that is dst's."""
    no_mask(fn, mask, dst)
    if dtype is None:
        return
    try:
        same = canonical_dtype(dtype) == dst.dtype
    except ValueError as err:
        raise kernel_error(f"nisa.{fn}: {err}") from None
    if not same:
        raise kernel_error(f"nisa.{fn}: dtype={dtype!r} differs from dst's dtype {dst.dtype}; the "
                           f"result is written in dst's dtype")


def new_tile(shape: tuple[int, ...], dtype: str) -> NkiTensor:
    return active_trace().allocate(shape, dtype, "sbuf", assigned_name())


# ---------------------------------------------------------------- 1.x forms

def _bn_stats_legacy(fn: object, data: object, *, mask: object = None, dtype: object = None) -> NkiTensor:
    x = chk.tile("bn_stats", "data", data)
    part, out, written = masked_input("bn_stats", mask, x, (x.partitions, 6),
                                      legacy._dtype(cast(Any, fn), dtype, x.dtype))
    bn_stats(dst=written, data=part)
    return out


def _bn_aggr_legacy(fn: object, data: object, *, mask: object = None, dtype: object = None) -> NkiTensor:
    x = chk.tile("bn_aggr", "data", data)
    part, out, written = masked_input("bn_aggr", mask, x, (x.partitions, 2),
                                      legacy._dtype(cast(Any, fn), dtype, x.dtype))
    bn_aggr(dst=written, data=part)
    return out


def _affine_select_legacy(fn: object, pred: object, on_true_tile: object, on_false_value: object, *,
                          mask: object = None, dtype: object = None) -> NkiTensor:
    x = chk.tile("affine_select", "on_true_tile", on_true_tile, ("sbuf", "psum"))
    no_mask("affine_select", mask, x)
    expr, cmp = _predicate(pred, x)
    if x.buffer == "psum":
        # NKI 1.x kernels select straight from a matmul's PSUM tile; GpSimd reads SBUF, so
        # the tile is first copied to SBUF by the Vector Engine (an exact copy)
        staged = new_tile(x.shape, x.dtype)
        trace = active_trace()
        trace.emit(ast.NcCopy(trace.access(staged), trace.access(x), klr_dtype(x.dtype),
                              klr_engine("affine_select", engine.vector, (engine.vector,))))
        x = staged
    out = new_tile(x.shape, legacy._dtype(cast(Any, fn), dtype, x.dtype))
    steps = dict(expr.terms)
    pattern = [[steps.get(axis, 0), size] for axis, size in enumerate(expr.sizes) if axis > 0]
    affine_select(dst=out, pattern=pattern, channel_multiplier=steps.get(0, 0), on_true_tile=x,
                  on_false_value=on_false_value, cmp_op=cmp, offset=expr.offset)
    return out


def _predicate(pred: object, x: NkiTensor) -> tuple[IndexExpr, Op]:
    """`lhs op rhs` of grid indices as (lhs - rhs, op) on x's grid."""
    if not isinstance(pred, Mask) or len(pred.clauses) != 1:
        raise kernel_error(f"nisa.affine_select: pred must be one comparison of grid indices such "
                           f"as (iy < ix), got {pred!r}")
    lhs, op, rhs = pred.clauses[0]
    expr = lhs - plain_number(rhs)
    if not isinstance(expr, IndexExpr) or expr.sizes not in (x.shape, tuple(x.shape)):
        raise kernel_error(f"nisa.affine_select: pred must be an affine expression over the grid of "
                           f"on_true_tile {list(x.shape)}, got {pred!r}")
    return expr, _MASK_OPS[op]


def _range_select_legacy(fn: object, *, on_true_tile: object, comp_op0: object, comp_op1: object,
                         bound0: object, bound1: object, reduce_cmd: reduce_cmd = _R.idle,
                         reduce_res: object = None, reduce_op: object = np.amax,
                         range_start: object = 0, on_false_value: object = FP32_MIN,
                         mask: object = None, dtype: object = None) -> NkiTensor:
    x = chk.tile("range_select", "on_true_tile", on_true_tile)
    no_mask("range_select", mask, x)
    out = new_tile(x.shape, legacy._dtype(cast(Any, fn), dtype, x.dtype))
    range_select(dst=out, on_true_tile=x, comp_op0=comp_op0, comp_op1=comp_op1, bound0=bound0,
                 bound1=bound1, reduce_cmd=reduce_cmd, reduce_res=reduce_res, reduce_op=reduce_op,
                 range_start=range_start, on_false_value=on_false_value)
    return out


# ---------------------------------------------------------------- statistics

@two_forms(_bn_stats_legacy)
def bn_stats(dst: object, data: object, name: str | None = None) -> None:
    """dst[P, 6] = (count, mean, variance*count) of the even and the odd elements per partition."""
    d, x = chk.tile("bn_stats", "dst", dst), chk.tile("bn_stats", "data", data)
    chk.same_partitions("bn_stats", ("data", x), ("dst", d))
    if not 1 <= x.free_elements <= 512:
        raise kernel_error(f"nisa.bn_stats: data has {x.free_elements} elements per partition; at "
                           f"most 512 (nl.tile_size.bn_stats_fmax): call bn_stats per 512-element "
                           f"tile and aggregate with one bn_aggr")
    if d.free_elements != 6:
        raise kernel_error(f"nisa.bn_stats: dst must hold 6 elements per partition, got {list(d.shape)}")
    emit(kv.BatchNormStats(ap(d), ap(x), klr_dtype(d.dtype)))


@two_forms(_bn_aggr_legacy)
def bn_aggr(dst: object, data: object, name: str | None = None) -> None:
    """dst[P, 2] = mean and variance pooled from bn_stats (count, mean, variance*count) triples."""
    d, x = chk.tile("bn_aggr", "dst", dst), chk.tile("bn_aggr", "data", data)
    chk.same_partitions("bn_aggr", ("data", x), ("dst", d))
    if x.free_elements % 3 or not x.free_elements:
        raise kernel_error(f"nisa.bn_aggr: data must hold (count, mean, variance*count) triples: "
                           f"{x.free_elements} elements per partition is not a multiple of 3")
    if d.free_elements != 2:
        raise kernel_error(f"nisa.bn_aggr: dst must hold 2 elements per partition (mean, variance), "
                           f"got {list(d.shape)}")
    emit(kv.BatchNormAggregate(ap(d), ap(x), klr_dtype(d.dtype)))


# ---------------------------------------------------------------- selections

def _on_false(fn: str, value: object, data: NkiTensor) -> ast.Operand:
    value = plain_number(value)
    if isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    return f32_operand(chk.scalar_operand(fn, "on_false", value, data))


def _reduce(fn: str, cmd: object, reduce_op: object, reduce_res: object,
            data: NkiTensor) -> tuple[ast.AccumCmd, ast.TensorRef | None]:
    accum = klr_accum(fn, cmd, (_R.idle, _R.reset, _R.reduce, _R.reset_reduce))
    if chk.alu_op(fn, "reduce_op", np.maximum if reduce_op is np.amax else reduce_op) is not ast.AluOp.max:
        raise kernel_error(f"nisa.{fn}: reduce_op={reduce_op!r} is not supported; only nl.maximum is")
    if reduce_res is None:
        return accum, None
    res = chk.reduce_tile(fn, "reduce_res", reduce_res, data)
    if not is_float(res.dtype):
        raise kernel_error(f"nisa.{fn}: reduce_res must have a float dtype, got {res.dtype}")
    return accum, ap(res)


def select_reduce(dst: object, predicate: object, on_true: object, on_false: object,
                  reduce_res: object = None, reduce_cmd: reduce_cmd = _R.idle,
                  reduce_op: object = np.maximum, reverse_pred: bool = False,
                  name: str | None = None, *, mask: object = None, dtype: object = None) -> None:
    """dst = where(predicate, on_true, on_false); optional max reduction into reduce_res."""
    fn = "select_reduce"
    d, p, t = chk.tile(fn, "dst", dst), chk.tile(fn, "predicate", predicate), chk.tile(fn, "on_true", on_true)
    legacy_options(fn, mask, dtype, d)
    chk.same_elements(fn, ("on_true", t), ("predicate", p), ("dst", d))
    chk.not_both_psum(fn, ("on_true", t), ("predicate", p))
    if is_float(p.dtype):
        raise kernel_error(f"nisa.{fn}: predicate must have an integer dtype (int8, uint8, int16, "
                           f"uint16), got {p.dtype}")
    if t.dtype in ("int32", "uint32", "tfloat32"):
        raise kernel_error(f"nisa.{fn}: on_true cannot be {t.dtype}")
    accum, res = _reduce(fn, reduce_cmd, reduce_op, reduce_res, t)
    emit(kv.SelectReduce(ap(d), ap(p), ap(t), _on_false(fn, on_false, t), res, accum,
                         ast.AluOp.max, bool(reverse_pred), klr_dtype(d.dtype)))


def tensor_copy_predicated(dst: object, src: object, predicate: object, reverse_pred: bool = False,
                           name: str | None = None, *, mask: object = None, dtype: object = None) -> None:
    """dst[i] = src[i] where predicate[i] is nonzero (reverse_pred: where it is zero)."""
    fn = "tensor_copy_predicated"
    d, p = chk.tile(fn, "dst", dst), chk.tile(fn, "predicate", predicate)
    legacy_options(fn, mask, dtype, d)
    chk.same_elements(fn, ("predicate", p), ("dst", d))
    if not isinstance(src, NkiTensor):   # a number: copied from a tile nisa.memset would fill
        value = plain_number(src)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise kernel_error(f"nisa.{fn}: src must be a tile or a number, got {chk.describe(value)}")
        fill = new_tile(d.shape, d.dtype)
        trace = active_trace()
        trace.emit(ast.MemSet(trace.access(fill),
                              ast.Immediate(float(value) if is_float(d.dtype) else int(value)),
                              klr_dtype(d.dtype), klr_engine(fn, engine.unknown, (engine.unknown,))))
        src = fill
    s = chk.tile(fn, "src", src)
    chk.same_elements(fn, ("src", s), ("dst", d))
    chk.not_both_psum(fn, ("src", s), ("predicate", p))
    if s.dtype != d.dtype:
        raise kernel_error(f"nisa.{fn}: src and dst must share a dtype, got {s.dtype} and {d.dtype}")
    if is_float(p.dtype):
        p = _as_uint32(p)
    emit(kv.CopyPredicated(ap(d), ap(s), ap(p), klr_dtype(d.dtype), bool(reverse_pred)))


def _as_uint32(pred: NkiTensor) -> NkiTensor:
    """A float predicate as the uint32 mask the Vector Engine reads (nonzero -> 1)."""
    mask = new_tile(pred.shape, "uint32")
    emit(ast.TensorScalar(ap(mask), ap(pred), ast.Immediate(0.0), ast.AluOp.not_equal,
                          engine=ast.Engine.dve, dtype=ast.Dtype.uint32))
    return mask


@two_forms(_affine_select_legacy)
def affine_select(dst: object, pattern: list[list[int]], channel_multiplier: int, on_true_tile: object,
                  on_false_value: object, cmp_op: object = np.equal, offset: int = 0,
                  name: str | None = None) -> None:
    """dst = on_true_tile where cmp_op(offset + p * channel_multiplier + pattern . x, 0)."""
    fn = "affine_select"
    d, t = chk.tile(fn, "dst", dst, ("sbuf",)), chk.tile(fn, "on_true_tile", on_true_tile, ("sbuf",))
    chk.same_elements(fn, ("on_true_tile", t), ("dst", d))
    pairs = _pattern(fn, pattern, d)
    op = chk.alu_op(fn, "cmp_op", cmp_op, allowed=_COMPARE_OPS | {"not_equal"})
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (offset, channel_multiplier)):
        raise kernel_error(f"nisa.{fn}: offset and channel_multiplier must be int32 values")
    value = plain_number(on_false_value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise kernel_error(f"nisa.{fn}: on_false_value must be a float32 number, got {on_false_value!r}")
    emit(kv.NcAffineSelect(ap(d), ast.DataPattern(offset, pairs, channel_multiplier), ap(t),
                           f32_immediate(float(value)), klr_dtype(d.dtype), op))


def _pattern(fn: str, pattern: object, d: NkiTensor) -> tuple[ast.APPair, ...]:
    if not isinstance(pattern, (list, tuple)) or not 1 <= len(pattern) <= 4 or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(v, int) for v in p)
            for p in pattern):
        raise kernel_error(f"nisa.{fn}: pattern is a list of 1 to 4 [step, num] int pairs, got "
                           f"{pattern!r}")
    pairs = tuple(ast.APPair(int(p[0]), int(p[1])) for p in pattern)
    count = int(np.prod([p.num for p in pairs]))
    if count != d.free_elements:
        raise kernel_error(f"nisa.{fn}: pattern covers {count} elements but dst has "
                           f"{d.free_elements} per partition")
    return pairs


@two_forms(_range_select_legacy)
def range_select(dst: object, on_true_tile: object, comp_op0: object, comp_op1: object, bound0: object,
                 bound1: object, reduce_cmd: reduce_cmd = _R.reset_reduce, reduce_res: object = None,
                 reduce_op: object = np.maximum, range_start: object = 0,
                 on_false_value: object = FP32_MIN, name: str | None = None) -> None:
    """dst = on_true_tile where comp_op0(i, bound0) and comp_op1(i, bound1), i = range_start + f."""
    fn = "range_select"
    d, t = chk.tile(fn, "dst", dst), chk.tile(fn, "on_true_tile", on_true_tile)
    chk.same_elements(fn, ("on_true_tile", t), ("dst", d))
    if not is_float(t.dtype):
        raise kernel_error(f"nisa.{fn}: on_true_tile must have a float dtype, got {t.dtype}")
    ops = [chk.alu_op(fn, arg, value, allowed=_COMPARE_OPS)
           for arg, value in (("comp_op0", comp_op0), ("comp_op1", comp_op1))]
    bounds = []
    for arg, value in (("bound0", bound0), ("bound1", bound1)):
        bound = chk.reduce_tile(fn, arg, value, t)
        if bound.dtype != "float32":
            raise kernel_error(f"nisa.{fn}: {arg} must be float32, got {bound.dtype}")
        bounds.append(ap(bound))
    start = plain_number(range_start)
    if isinstance(start, bool) or not isinstance(start, int):
        raise kernel_error(f"nisa.{fn}: range_start must be a compile-time integer, got {range_start!r}")
    fill = plain_number(on_false_value)
    if isinstance(fill, bool) or not isinstance(fill, (int, float)):
        raise kernel_error(f"nisa.{fn}: on_false_value must be a number, got {on_false_value!r}")
    accum, res = _reduce(fn, reduce_cmd, reduce_op, reduce_res, t)
    emit(kv.NcRangeSelect(ap(d), accum, res, ast.AluOp.max, ops[0], ops[1], bounds[0], bounds[1],
                          ast.Immediate(float(start)), ap(t), f32_immediate(float(fill)),
                          klr_dtype(d.dtype)))
