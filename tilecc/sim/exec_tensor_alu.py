"""Simulator executors of the tensor ALU family: tensor-scalar (all its variants, the
tensor-tensor scan included), the cumulative tensor-scalar cache, tensor-tensor and reduce.

Contract: `exec_*(machine, inst)` runs one instruction of its class through the operand
helpers of sim/operands.py; each stage computes in float32 by the ALU table (sim/alu.py)
and the result is converted to the destination AP's dtype. A tensor-scalar reduce folds
the float32 results into the DVE registers before the output conversion. The cumulative
cache op starts from op1's identity on Idle / Zero / ZeroAccumulate, from s1 on
LoadAccumulate and from the DVE registers on (Add)Accumulate; the tensor-tensor scan
starts from its init operand, or from the DVE registers on (Add)Accumulate. Scans and
running folds keep their state in float32 registers, so they refuse bitvec ops.
Semantics: bir/inst.py (fields) and reference/klr-bir.md "NKI instruction semantics".
"""

from __future__ import annotations

import numpy as np

from tilecc.bir.enums import AluOpType, AxisListType, EngineAccumulationType as Acc, TSCMode
from tilecc.bir.inst import (InstTensorReduce, InstTensorScalarCache, InstTensorScalarPtr,
                             InstTensorTensor)
from tilecc.bir.tensor_scalar_variant import TensorScalarVariant as Variant
from tilecc.bir.tensor_scalar_variant import TensorScalarVariantError, tensor_scalar_variant
from tilecc.errors import SimError
from tilecc.sim.alu import AluEntry, alu_entry, reduce_alu, to_f32
from tilecc.sim.machine import Machine
from tilecc.sim.operands import (accumulate, lanes, read, read_registers, rows_of, scalar, stage,
                                 write, write_registers, write_stage, write_stages)

F32 = np.float32
Value = np.ndarray
# enum members of the hot paths, read once: `Enum.member` costs ~10x a global (Python 3.11)
IDLE = Acc.Idle
REDUCE, STT, SCAN = Variant.REDUCE, Variant.SCALAR_TENSOR_TENSOR, Variant.TENSOR_TENSOR_SCAN
AXIS_ALL = AxisListType.XYZWC
ACROSS_PARTITIONS = (AxisListType.C, AxisListType.XYZWC)


def exec_tensor_reduce(m: Machine, inst: InstTensorReduce) -> None:
    src = read(m, inst.ins[0], "reduce input")
    entry = alu_entry(inst.op)
    if inst.axis in ACROSS_PARTITIONS:
        if inst.negate:
            raise SimError("a cross-partition (axis C) reduce cannot negate")
        axes = tuple(range(src.ndim)) if inst.axis == AXIS_ALL else (0,)
        result = reduce_alu(entry, src, axes)
    else:
        count = int(inst.axis) + 1
        if count > src.ndim - 1:
            raise SimError(f"axis {inst.axis.name} folds {count} free dims; the input has "
                           f"{src.ndim - 1}")
        result = reduce_alu(entry, src, tuple(range(src.ndim - count, src.ndim)))
        if inst.negate:
            if entry.kind == "bitvec":
                raise SimError(f"negate needs an arithmetic op, got {entry.name}")
            result = -result
    write(m, inst.outs[0], result)


def exec_tensor_scalar_ptr(m: Machine, inst: InstTensorScalarPtr) -> None:
    try:
        variant = tensor_scalar_variant(inst)
    except TensorScalarVariantError as err:
        raise SimError(f"TensorScalarPtr: {err}") from None
    if variant is SCAN:
        return tensor_tensor_scan(m, inst)
    data = read(m, inst.ins[0], "tensor-scalar input")
    op0, op1 = alu_entry(inst.op0), alu_entry(inst.op1)
    s0 = scalar(m, inst.ins[1], data)
    if variant is STT:
        other = read(m, inst.ins[2], "scalar-tensor-tensor second tensor")
        if other.shape != data.shape:
            raise SimError(f"scalar-tensor-tensor tensors differ in shape: {data.shape} "
                           f"vs {other.shape}")
        write_stages(m, inst.outs[0], data, op0, s0, inst.reverse0, op1, other, inst.reverse1,
                     inst.ins[2])
        return None
    if variant is REDUCE:  # dst, then the [P,1] fold of each row
        tmp = stage(op0, data, s0, inst.reverse0)
        write(m, inst.outs[0], tmp)
        regs, lane = m.dve_acc, lanes(m, inst.outs[0])
        accumulate(m, regs, lane, inst.acc, op1, rows_of(to_f32(tmp)))
        red = read_registers(m, regs, lane).reshape(-1, 1)
        write(m, inst.outs[1], -red if inst.negate_second_output else red)
        return None
    if len(inst.ins) == 2:  # one stage: straight into the destination
        if op1.name != "bypass":
            raise SimError(f"op1 {op1.name} has no second scalar operand")
        write_stage(m, inst.outs[0], op0, data, s0, inst.reverse0)
        return None
    write_stages(m, inst.outs[0], data, op0, s0, inst.reverse0, op1,
                 scalar(m, inst.ins[2], data), inst.reverse1, inst.ins[2])
    return None


def arithmetic_only(what: str, op0: AluOpType, op1: AluOpType) -> tuple[AluEntry, AluEntry]:
    """Scans and running folds keep their state in float32 registers: no bitvec ops."""
    entries = alu_entry(op0), alu_entry(op1)
    for entry in entries:
        if entry.kind == "bitvec":
            raise SimError(f"{what} runs in float32 registers: {entry.name} is a bitvec op")
    return entries


def tensor_tensor_scan(m: Machine, inst: InstTensorScalarPtr) -> None:
    """r_i = (src0_i op0 r_{i-1}) op1 src1_i per partition; one vector step per column."""
    src0 = read(m, inst.ins[0], "scan first tensor")
    src1 = read(m, inst.ins[2], "scan second tensor")
    if src0.shape != src1.shape:
        raise SimError(f"scan tensors differ in shape: {src0.shape} vs {src1.shape}")
    op0, op1 = arithmetic_only("tensor_tensor_scan", inst.op0, inst.op1)
    dst = inst.outs[0]
    lane = lanes(m, dst)
    if inst.acc in (Acc.Accumulate, Acc.AddAccumulate):
        r: Value = read_registers(m, m.dve_acc, lane).copy()
    else:
        init = scalar(m, inst.ins[1], src0)
        r = np.broadcast_to(to_f32(init).reshape(-1), (src0.shape[0],)).copy()
    a, b = rows_of(src0), rows_of(src1)
    out = np.empty(a.shape, F32)
    for i in range(a.shape[1]):
        r = stage(op1, stage(op0, a[:, i], r, inst.reverse0), b[:, i], inst.reverse1)
        out[:, i] = r
    write_registers(m, m.dve_acc, lane, to_f32(r))
    write(m, dst, out.reshape(src0.shape))


def exec_tensor_scalar_cache(m: Machine, inst: InstTensorScalarCache) -> None:
    if inst.mode != TSCMode.Cumulative:
        raise SimError(f"TensorScalarCache mode {inst.mode.name} is not implemented "
                       "(the codegen emits Cumulative only)")
    src = read(m, inst.ins[0], "cumulative input")
    op0, op1 = arithmetic_only("cumulative", inst.op0, inst.op1)
    if op1.identity is None:
        raise SimError(f"op1 {op1.name} cannot accumulate")
    t = rows_of(to_f32(stage(op0, src, scalar(m, inst.ins[1], src), inst.reverse0)))
    dst = inst.outs[0]
    lane = lanes(m, dst)
    count = t.shape[0]
    if inst.acc in (Acc.Idle, Acc.Zero, Acc.ZeroAccumulate):
        reg = np.full(count, op1.identity, F32)
    elif inst.acc == Acc.LoadAccumulate:
        if len(inst.ins) < 3:
            raise SimError("LoadAccumulate needs the initial value as ins[2]")
        init = scalar(m, inst.ins[2], src)
        reg = np.broadcast_to(to_f32(init).reshape(-1), (count,)).astype(F32)
    else:
        reg = read_registers(m, m.dve_acc, lane).copy()
    out = running_fold(op1, reg, t, inst.reverse1)
    write_registers(m, m.dve_acc, lane, out[:, -1] if out.shape[1] else reg)
    write(m, dst, out.reshape(src.shape))


# ops whose running fold op(t_i, reg) equals numpy's accumulate (exact: commutative in IEEE)
_ACCUMULATE_EXACT = frozenset({"add", "mult", "elemwise_mul"})


def running_fold(op: AluEntry, reg: Value, t: Value, reverse: bool) -> Value:
    if op.name in _ACCUMULATE_EXACT and op.ufunc is not None:
        seeded = np.concatenate([reg.reshape(-1, 1), t], axis=1)
        return op.ufunc.accumulate(seeded, axis=1, dtype=F32)[:, 1:]
    out = np.empty(t.shape, F32)
    for i in range(t.shape[1]):
        reg = stage(op, t[:, i], reg, reverse)
        out[:, i] = reg
    return out


def exec_tensor_tensor(m: Machine, inst: InstTensorTensor) -> None:
    if inst.acc != IDLE:
        raise SimError(f"tensor_tensor accumulate {inst.acc.name} is not supported")
    a = read(m, inst.ins[0], "tensor_tensor first input")
    b = read(m, inst.ins[1], "tensor_tensor second input")
    if a.shape != b.shape:
        raise SimError(f"tensor_tensor inputs differ in shape: {a.shape} vs {b.shape}")
    write_stage(m, inst.outs[0], alu_entry(inst.op), a, b, False)
