"""nki.isa activation-engine family: activation, activation_reduce, activate2, exponential
and reciprocal (re-exported by tilecc.nki.isa).

Contract as tilecc/nki/isa.py. Documented restrictions checked here (NKI docstrings):
activation's reduce_op must be nl.add, scale is a float32 scalar or a [P, 1] tile, bias a
[P, 1] tile or a scalar (a scalar bias is written to a [P, 1] float32 tile by a MemSet,
since KLR's bias is a tensor); activate2's (op0, op1) is one of six pairs, reverse0 / reverse1
need op0 / op1 set, both immediates share a dtype when both are tiles; exponential's
reduce_init stays 0.0 unless reduce_cmd is load_reduce, dst dtypes as listed in the docs.
"""

from __future__ import annotations

from tilecc.klr import ast
from tilecc.nki import isa_legacy as legacy
from tilecc.nki import operands as chk
from tilecc.nki.isa_legacy import two_forms
from tilecc.nki.dtypes import is_float, plain_number
from tilecc.nki.errors import kernel_error
from tilecc.nki.isa_enums import klr_accum, reduce_cmd
from tilecc.nki.ops import ACTIVATE2_PAIRS, ACTIVATE2_REDUCE_OPS
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import active_trace, klr_dtype

_ReduceCmd = reduce_cmd
_ALL_CMDS = tuple(reduce_cmd)
_EXP_DST_DTYPES = frozenset({"float8_e4m3", "float8_e5m2", "float16", "bfloat16", "float32", "tfloat32",
                             "int8", "int16", "int32", "uint8", "uint16"})


def _bias(fn: str, bias: object, data: NkiTensor) -> ast.TensorRef | None:
    if bias is None:
        return None
    bias = plain_number(bias)
    trace = active_trace()
    if isinstance(bias, NkiTensor):
        if bias.buffer == "hbm" or bias.partitions != data.partitions or bias.free_elements != 1:
            raise kernel_error(f"nisa.{fn}: bias must be a scalar or a [{data.partitions}, 1] tile, "
                               f"got {chk.describe(bias)}")
        if bias.dtype == "tfloat32":
            raise kernel_error(f"nisa.{fn}: bias cannot be tfloat32")
        return trace.access(bias)
    if isinstance(bias, bool) or not isinstance(bias, (int, float)):
        raise kernel_error(f"nisa.{fn}: bias must be a scalar or a [{data.partitions}, 1] tile, "
                           f"got {chk.describe(bias)}")
    column = trace.allocate((data.partitions, 1), "float32", "sbuf", "bias_const")
    trace.emit(ast.MemSet(trace.access(column), ast.Immediate(float(bias)), ast.Dtype.float32))
    return trace.access(column)


def _activation(fn: str, dst: object, op: object, data: object, bias: object, scale: object,
                reduce_op: object, reduce_res: object, cmd: ast.AccumCmd,
                ctor: type[ast.NcActivate]) -> None:
    d, x = chk.tile(fn, "dst", dst), chk.tile(fn, "data", data)
    chk.same_elements(fn, ("data", x), ("dst", d))
    func = chk.act_func(fn, "op", op)
    reduce_alu = None if reduce_op is None else chk.alu_op(fn, "reduce_op", reduce_op, allowed=("add",))
    if reduce_alu is None and cmd in (ast.AccumCmd.Accumulate, ast.AccumCmd.ZeroAccumulate):
        raise kernel_error(f"nisa.{fn}: reduce_cmd accumulates but reduce_op is None; pass reduce_op=nl.add")
    res = None if reduce_res is None else chk.reduce_tile(fn, "reduce_res", reduce_res, x)
    scale_operand = chk.scalar_operand(fn, "scale", scale, x)
    bias_ref = _bias(fn, bias, x)
    trace = active_trace()
    trace.emit(ctor(trace.access(d), trace.access(x), cmd, func, scale_operand, bias_ref, reduce_alu,
                    None if res is None else trace.access(res), klr_dtype(d.dtype)))


@two_forms(legacy.activation)
def activation(dst: object, op: object, data: object, bias: object = None, scale: object = 1.0,
               reduce_op: object = None, reduce_res: object = None,
               reduce_cmd: reduce_cmd = _ReduceCmd.idle, name: str | None = None) -> None:
    """dst = op(data * scale + bias), optionally reducing each row into reduce_res (Scalar Engine)."""
    cmd = klr_accum("activation", reduce_cmd, _ALL_CMDS[:4])
    _activation("activation", dst, op, data, bias, scale, reduce_op, reduce_res, cmd, ast.NcActivate)


@two_forms(legacy.activation_reduce)
def activation_reduce(dst: object, op: object, data: object, reduce_op: object, reduce_res: object,
                      bias: object = None, scale: object = 1.0, name: str | None = None) -> None:
    """activation with reduce_cmd=reset_reduce: reduce_res[P, 1] = reduce_op over each row of dst."""
    if reduce_res is None or reduce_op is None:
        raise kernel_error("nisa.activation_reduce: reduce_op and reduce_res are required")
    _activation("activation_reduce", dst, op, data, bias, scale, reduce_op, reduce_res,
                ast.AccumCmd.ZeroAccumulate, ast.ActivationReduce)


def activate2(dst: object, op: object, data: object, imm0: object, imm1: object, op0: object, op1: object,
              relu_param: object = 0.0, reverse0: bool = False, reverse1: bool = False,
              reduce_op: object = None, reduce_res: object = None,
              reduce_cmd: reduce_cmd = _ReduceCmd.idle, name: str | None = None) -> None:
    """dst = op((data op0 imm0) op1 imm1), then an optional row reduction (Scalar Engine)."""
    fn = "activate2"
    d, x = chk.tile(fn, "dst", dst), chk.tile(fn, "data", data)
    chk.same_elements(fn, ("data", x), ("dst", d))
    func = chk.act_func(fn, "op", op)
    alu0 = chk.alu_op(fn, "op0", op0, arithmetic=True)
    alu1 = chk.alu_op(fn, "op1", op1, arithmetic=True)
    if (alu0.name, alu1.name) not in ACTIVATE2_PAIRS:
        raise kernel_error(f"nisa.activate2: (op0, op1) = ({op0!r}, {op1!r}) is not supported; use "
                           f"(multiply, add), (multiply, subtract), (multiply, bypass), (add, bypass), "
                           f"(subtract, bypass) or (bypass, bypass)")
    if reverse0 and alu0 is ast.AluOp.bypass:
        raise kernel_error("nisa.activate2: reverse0 requires op0 to be set")
    if reverse1 and alu1 is ast.AluOp.bypass:
        raise kernel_error("nisa.activate2: reverse1 requires op1 to be set")
    if isinstance(imm0, NkiTensor) and isinstance(imm1, NkiTensor) and imm0.dtype != imm1.dtype:
        raise kernel_error(f"nisa.activate2: imm0 ({imm0.dtype}) and imm1 ({imm1.dtype}) tiles must "
                           f"have the same dtype")
    cmd = klr_accum(fn, reduce_cmd, _ALL_CMDS[:4])
    red = ast.AluOp.bypass if reduce_op is None else chk.alu_op(fn, "reduce_op", reduce_op,
                                                                allowed=ACTIVATE2_REDUCE_OPS)
    if red is ast.AluOp.bypass and (reduce_res is not None or cmd is not ast.AccumCmd.Idle):
        raise kernel_error("nisa.activate2: a reduction (reduce_res / reduce_cmd) needs reduce_op")
    res = None if reduce_res is None else chk.reduce_tile(fn, "reduce_res", reduce_res, x)
    operands = [chk.scalar_operand(fn, arg, value, x, float32_tile=False)
                for arg, value in (("imm0", imm0), ("imm1", imm1), ("relu_param", relu_param))]
    trace = active_trace()
    trace.emit(ast.Activate2(trace.access(d), trace.access(x), alu0, alu1, operands[0], operands[1], func,
                             operands[2], red, None if res is None else trace.access(res), cmd,
                             bool(reverse0), bool(reverse1), klr_dtype(d.dtype)))


def exponential(dst: object, src: object, max_value: object = 0.0, reduce_res: object = None,
                reduce_cmd: reduce_cmd = _ReduceCmd.idle, reduce_init: object = 0.0,
                name: str | None = None) -> None:
    """dst = exp(src - max_value), optionally summing each row into reduce_res (Vector Engine)."""
    fn = "exponential"
    d, x = chk.tile(fn, "dst", dst), chk.tile(fn, "src", src)
    chk.same_elements(fn, ("src", x), ("dst", d))
    if d.dtype not in _EXP_DST_DTYPES:
        raise kernel_error(f"nisa.exponential: dst dtype {d.dtype} is not supported")
    if x.dtype in ("tfloat32", "float8_e4m3fn"):
        raise kernel_error(f"nisa.exponential: src dtype {x.dtype} is not supported")
    cmd = klr_accum(fn, reduce_cmd, (_ReduceCmd.idle, _ReduceCmd.reset_reduce, _ReduceCmd.reduce,
                                     _ReduceCmd.load_reduce))
    if reduce_cmd is not _ReduceCmd.load_reduce and reduce_init not in (None, 0, 0.0):
        raise kernel_error("nisa.exponential: reduce_init should be unset or 0.0 when reduce_cmd is not "
                           "load_reduce")
    res = None if reduce_res is None else chk.reduce_tile(fn, "reduce_res", reduce_res, x)
    if res is not None and not is_float(res.dtype):
        raise kernel_error(f"nisa.exponential: reduce_res must have a float dtype, got {res.dtype}")
    max_operand = chk.scalar_operand(fn, "max_value", max_value, x)
    init = chk.scalar_operand(fn, "reduce_init", 0.0 if reduce_init is None else reduce_init, x)
    trace = active_trace()
    trace.emit(ast.Exponential(trace.access(d), trace.access(x), max_operand,
                               None if res is None else trace.access(res), cmd, init))


@two_forms(legacy.reciprocal)
def reciprocal(dst: object, data: object, name: str | None = None) -> None:
    """dst = 1.0 / data in float32 (Vector Engine)."""
    d, x = chk.tile("reciprocal", "dst", dst), chk.tile("reciprocal", "data", data)
    chk.same_elements("reciprocal", ("data", x), ("dst", d))
    trace = active_trace()
    trace.emit(ast.Reciprocal(trace.access(d), trace.access(x), klr_dtype(d.dtype)))
