"""nki.isa reductions: tensor_reduce, tensor_partition_reduce, tensor_scalar_reduce and
tensor_scalar_cumulative (re-exported by tilecc.nki.isa).

Contract as tilecc/nki/isa.py. Documented restrictions checked here (NKI docstrings):
tensor_reduce reduces "the last contiguous free dimension(s) ending at the final dim", never
axis 0, negate only for arithmetic ops, at most 4 axes (KLR TensorSubDim X..XYZW);
tensor_partition_reduce op in {add, max, bitwise_or, bitwise_and} (+ average), a one-
partition dst, and (birverifier, klr-bir.md) partition and element counts in multiples of
32; tensor_scalar_reduce reduce_op in {add, multiply, max, min}, op0 arithmetic;
tensor_scalar_cumulative op1 in {add, subtract, multiply, max, min}, no int32/uint32 tiles.
"""

from __future__ import annotations

from tilecc.klr import ast
from tilecc.nki import isa_legacy as legacy
from tilecc.nki import operands as chk
from tilecc.nki.isa_legacy import two_forms
from tilecc.nki.errors import kernel_error
from tilecc.nki.isa_enums import klr_accum, reduce_cmd
from tilecc.nki.ops import CUMULATIVE_OPS, PARTITION_REDUCE_OPS, SCALAR_REDUCE_OPS
from tilecc.nki.tracer import active_trace, klr_dtype

_ReduceCmd = reduce_cmd


@two_forms(legacy.tensor_reduce)
def tensor_reduce(dst: object, op: object, data: object, axis: int | tuple[int, ...] | list[int],
                  negate: bool = False, keepdims: bool = False, name: str | None = None) -> None:
    """dst = op-reduction of data over its last free axes (Vector Engine)."""
    fn = "tensor_reduce"
    d, x = chk.tile(fn, "dst", dst), chk.tile(fn, "data", data)
    chk.same_partitions(fn, ("data", x), ("dst", d))
    axes = _reduce_axes(x.ndim, axis)
    alu = chk.alu_op(fn, "op", op, binary=True)
    chk.integer_dtypes(fn, alu, ("data", x), ("dst", d))
    if negate and alu in ast.BITWISE_ALU_OPS:
        raise kernel_error(f"nisa.tensor_reduce: negate is only applicable to arithmetic operators, "
                           f"not {op!r}")
    kept = 1
    for size in x.shape[1:x.ndim - len(axes)]:
        kept *= size
    if d.free_elements != kept:
        raise kernel_error(f"nisa.tensor_reduce: shape mismatch: reducing axis {list(axes)} of data "
                           f"{list(x.shape)} leaves {kept} elements per partition, but dst "
                           f"{list(d.shape)} has {d.free_elements}")
    trace = active_trace()
    trace.emit(ast.TensorReduce(trace.access(d), trace.access(x), alu, ast.TensorSubDim(len(axes) - 1),
                                bool(negate), klr_dtype(d.dtype), bool(keepdims)))


def _reduce_axes(ndim: int, axis: object) -> tuple[int, ...]:
    raw = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    ints = [a for a in raw if isinstance(a, int) and not isinstance(a, bool)]
    if not raw or len(ints) != len(raw):
        raise kernel_error(f"nisa.tensor_reduce: axis must be an int or a list of ints, got {axis!r}")
    axes = sorted(a + ndim if a < 0 else a for a in ints)
    if 0 in axes:
        raise kernel_error("nisa.tensor_reduce: axis 0 (the partition axis) cannot be reduced; use "
                           "nisa.tensor_partition_reduce")
    if axes != list(range(ndim - len(axes), ndim)) or axes[0] < 1:
        raise kernel_error(f"nisa.tensor_reduce: axis {list(raw)} must be the last contiguous free "
                           f"dimension(s) of a {ndim}-d tile, ending at axis {ndim - 1}")
    if len(axes) > 4:
        raise kernel_error("nisa.tensor_reduce: at most 4 free axes can be reduced in one instruction")
    return tuple(axes)


@two_forms(legacy.tensor_partition_reduce)
def tensor_partition_reduce(dst: object, op: object, data: object, name: str | None = None) -> None:
    """dst[0, ...] = op over the partitions of data (GpSimd Engine)."""
    fn = "tensor_partition_reduce"
    d, x = chk.tile(fn, "dst", dst), chk.tile(fn, "data", data)
    alu = chk.alu_op(fn, "op", op, allowed=PARTITION_REDUCE_OPS)
    chk.integer_dtypes(fn, alu, ("data", x), ("dst", d))
    if d.partitions != 1 or d.free_elements != x.free_elements:
        raise kernel_error(f"nisa.tensor_partition_reduce: dst must be [1, ...] with the "
                           f"{x.free_elements} elements of one data partition, got {list(d.shape)}")
    if x.partitions % 32 or x.free_elements % 32:
        raise kernel_error(f"nisa.tensor_partition_reduce: the cross-lane reduce works on 32-partition "
                           f"banks: partition and element counts must be multiples of 32, data is "
                           f"{list(x.shape)}")
    trace = active_trace()
    trace.emit(ast.TensorPartitionReduce(trace.access(d), alu, trace.access(x), klr_dtype(d.dtype)))


@two_forms(legacy.tensor_scalar_reduce)
def tensor_scalar_reduce(dst: object, data: object, op0: object, operand0: object, reduce_op: object,
                         reduce_res: object, reverse0: bool = False,
                         reduce_cmd: reduce_cmd = _ReduceCmd.reset_reduce,
                         reduce_init: float | None = None, name: str | None = None) -> None:
    """dst = data op0 operand0; reduce_res[P, 1] = reduce_op over the free elements of dst."""
    fn = "tensor_scalar_reduce"
    d, x = chk.tile(fn, "dst", dst), chk.tile(fn, "data", data)
    chk.same_elements(fn, ("data", x), ("dst", d))
    res = chk.reduce_tile(fn, "reduce_res", reduce_res, x)
    alu0 = chk.alu_op(fn, "op0", op0, arithmetic=True)
    red = chk.alu_op(fn, "reduce_op", reduce_op, allowed=SCALAR_REDUCE_OPS)
    if reverse0:
        raise kernel_error("nisa.tensor_scalar_reduce: reverse0 is not supported yet (NKI docs)")
    klr_accum(fn, reduce_cmd, (_ReduceCmd.reset_reduce, _ReduceCmd.reduce, _ReduceCmd.load_reduce))
    if reduce_cmd is not _ReduceCmd.reset_reduce:
        raise kernel_error(f"nisa.tensor_scalar_reduce: reduce_cmd={reduce_cmd} cannot be expressed in "
                           f"KLR (TensorScalarReduce always resets); use reset_reduce")
    if reduce_init is not None:
        raise kernel_error("nisa.tensor_scalar_reduce: reduce_init should only be set when reduce_cmd "
                           "is load_reduce")
    operand = chk.scalar_operand(fn, "operand0", operand0, x)
    trace = active_trace()
    trace.emit(ast.TensorScalarReduce(trace.access(d), trace.access(x), operand, alu0, False,
                                      klr_dtype(d.dtype), red, trace.access(res)))


def tensor_scalar_cumulative(dst: object, src: object, op0: object, op1: object, imm0: object,
                             imm1: object = None, reduce_cmd: reduce_cmd = _ReduceCmd.reset_reduce,
                             name: str | None = None) -> None:
    """reg = op1(op0(src[i], imm0), reg); dst[i] = reg, per partition along the free elements."""
    fn = "tensor_scalar_cumulative"
    d, x = chk.tile(fn, "dst", dst), chk.tile(fn, "src", src)
    chk.same_elements(fn, ("src", x), ("dst", d))
    for arg, value in (("src", x), ("dst", d)):
        if value.dtype in ("int32", "uint32"):
            raise kernel_error(f"nisa.{fn}: {arg} dtype {value.dtype} is not supported (INT32/UINT32 "
                               f"are not allowed as input/output dtypes)")
    alu0 = chk.alu_op(fn, "op0", op0, arithmetic=True)
    alu1 = chk.alu_op(fn, "op1", op1, allowed=CUMULATIVE_OPS)
    cmd = klr_accum(fn, reduce_cmd, (_ReduceCmd.reset_reduce, _ReduceCmd.reduce, _ReduceCmd.load_reduce))
    if reduce_cmd is _ReduceCmd.load_reduce and imm1 is None:
        raise kernel_error("nisa.tensor_scalar_cumulative: reduce_cmd=load_reduce needs imm1, the "
                           "initial accumulator value")
    operand0 = chk.scalar_operand(fn, "imm0", imm0, x)
    operand1 = None if imm1 is None else chk.scalar_operand(fn, "imm1", imm1, x)
    trace = active_trace()
    trace.emit(ast.TensorScalarCumulative(trace.access(d), trace.access(x), alu0, alu1, operand0,
                                          operand1, cmd, ast.TensorScalarReverseOps.none,
                                          klr_dtype(d.dtype)))
