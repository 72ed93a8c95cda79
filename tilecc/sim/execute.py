"""Execute a BIR Program on the simulated machine: one function per BIR opcode.

Contract: `simulate(program, inputs)` places every MemoryLocation (side by side, or by
lifetime when they do not all fit: sim/placement.py), copies each kernel input
(by IOTensor name; shape and dtype must match) into its HBM tensor, runs the instructions
in order and returns every kernel output as a numpy array of its IOTensor shape and dtype
(bf16 / fp8 as ml_dtypes arrays). A tensor that is both input and output keeps the values
the kernel does not write. Any fault is a SimError whose message starts with the kernel
line and NKI call the instruction comes from (when it carries a `pos`), then the
instruction's name (`describe_inst`).

Semantics (operand order and fields: bir/inst.py; meaning: reference/klr-bir.md "NKI
instruction semantics"): operands are read through access-pattern views, arithmetic is
done in float32 by the ALU table (sim/alu.py) and the activation table (sim/activation.py),
and the result is converted to the destination AP's dtype (sim/dtypes.py); operand
conventions and accumulate commands are in sim/operands.py. Reductions into an
accumulator (activation accumulate, tensor-scalar reduce, exponential, cumulative) fold
the float32 results before the output conversion. A bound accumulator AP then receives
the registers; Read*Accumulator drains them into their AP. The cumulative cache op starts
from op1's identity on Idle / Zero / ZeroAccumulate, from s1 on LoadAccumulate and from
the DVE registers on (Add)Accumulate; the tensor-tensor scan starts from its init operand,
or from the DVE registers on (Add)Accumulate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from tilecc.blas_threads import one_blas_thread
from tilecc.bir.enums import (AluOpType, AxisListType, EngineAccumulationType as Acc, MemoryKind,
                              TSCMode)
from tilecc.bir.inst import (AccessPattern, Immediate, Inst, InstActivation,
                             InstDMACopy, InstDveReadAccumulator, InstExponential, InstIota,
                             InstMemset, InstReadActivationAccumulator, InstReciprocal,
                             InstTensorCopy, InstTensorReduce, InstTensorScalarCache,
                             InstTensorScalarPtr, InstTensorTensor, Program)
from tilecc.bir.tensor_scalar_variant import TensorScalarVariant as Variant
from tilecc.bir.tensor_scalar_variant import TensorScalarVariantError, tensor_scalar_variant
from tilecc.errors import SimError, SimIndexError
from tilecc.sim.inst_label import describe_inst
from tilecc.sim.activation import ACTIVATION_TABLE, apply_activation
from tilecc.sim.alu import (ALU_TABLE, AluEntry, alu_entry, apply_alu, broadcasts_to, reduce_alu,
                            to_f32)
from tilecc.sim.dtypes import convert, numpy_dtype
from tilecc.sim.exec_tensor_engine import TENSOR_ENGINE_EXECUTORS
from tilecc.sim.exec_random import EXECUTORS as RANDOM_EXECUTORS
from tilecc.sim.exec_vector import EXECUTORS as VECTOR_EXECUTORS
from tilecc.sim.machine import Machine
from tilecc.sim.placement import plan_columns
from tilecc.sim.operands import (accumulate, lanes, read, read_registers, rows_of, scalar, stage,
                                 write, write_registers, write_stage, write_stages)

F32 = np.float32
Value = np.ndarray


# ---------------------------------------------------------------- one function per opcode

def exec_activation(m: Machine, inst: InstActivation) -> None:
    dst = inst.outs[0]
    src = read(m, inst.ins[0], "activation input")
    target: Value | None = None
    if inst.is_activate2:
        rest = inst.ins[1:4]
        if len(rest) != 3:
            raise SimError("activate2 needs ins [src, imm0, imm1, relu_param, accumulator?]")
        imm0, imm1, relu = (scalar(m, arg, src) for arg in rest)
        val = stage(alu_entry(inst.op0), src, imm0, inst.reverse0)
        val = stage(alu_entry(inst.op1), val, imm1, inst.reverse1)
        out = apply_activation(inst.func, to_f32(val), to_f32(relu))
        acc_args, reduce_entry = inst.ins[4:], alu_entry(inst.reduce_op)
    else:
        bias = scalar(m, inst.ins[1], src)
        if inst.scale is None:
            scale, acc_args = scalar(m, inst.ins[2], src), inst.ins[3:]
        else:
            scale, acc_args = F32(inst.scale), inst.ins[2:]
        target = m.view(dst, write=True)
        x, s, b = to_f32(src), to_f32(scale), to_f32(bias)
        if (target.dtype == F32 and inst.func in ACTIVATION_TABLE and x.shape == target.shape
                and broadcasts_to(x.shape, s.shape, x.shape)
                and broadcasts_to(x.shape, b.shape, x.shape)
                and not np.may_share_memory(b, target)):
            # the affine pre-stage in place (a temporary of a large tile costs more than
            # the arithmetic); the bias is read after the destination is written
            pre = np.multiply(x, s, out=target)
        else:
            pre = np.multiply(x, s, dtype=F32)
        pre += b
        out = apply_activation(inst.func, pre, inst.alpha, out=target)
        reduce_entry = ALU_TABLE["add"]
    if out is not target:
        write(m, dst, out)
    lane = lanes(m, dst)
    if inst.acc != Acc.Idle:
        accumulate(m, m.act_acc, lane, inst.acc, reduce_entry, rows_of(out))
    for arg in acc_args:
        if isinstance(arg, Immediate):
            raise SimError("the activation accumulator must be a tensor access")
        write(m, arg, read_registers(m, m.act_acc, lane).reshape(-1, 1))


def exec_read_act_accumulator(m: Machine, inst: InstReadActivationAccumulator) -> None:
    drain_accumulator(m, inst, m.act_acc)


def exec_dve_read_accumulator(m: Machine, inst: InstDveReadAccumulator) -> None:
    drain_accumulator(m, inst, m.dve_acc)


def drain_accumulator(m: Machine, inst: Inst, regs: Value) -> None:
    targets = [a for a in (*inst.ins, *inst.outs) if isinstance(a, AccessPattern)]
    if len(targets) != 1:
        raise SimError("an accumulator read needs exactly one destination access")
    write(m, targets[0], read_registers(m, regs, lanes(m, targets[0])).reshape(-1, 1))


def exec_reciprocal(m: Machine, inst: InstReciprocal) -> None:
    src = read(m, inst.ins[0], "reciprocal input")
    write(m, inst.outs[0], F32(1.0) / to_f32(src))


def exec_exponential(m: Machine, inst: InstExponential) -> None:
    if len(inst.ins) != 3:
        raise SimError("exponential needs ins [max_value, reduce_init, src]")
    src = read(m, inst.ins[2], "exponential input")
    max_value = scalar(m, inst.ins[0], src)
    init = scalar(m, inst.ins[1], src)
    out = np.exp(to_f32(src) - to_f32(max_value))
    dst = inst.outs[0]
    write(m, dst, out)
    init_lanes = np.broadcast_to(to_f32(init).reshape(-1), (src.shape[0],))
    accumulate(m, m.dve_acc, lanes(m, dst), inst.reduce_cmd, ALU_TABLE["add"], rows_of(out),
               init_lanes)


def exec_tensor_reduce(m: Machine, inst: InstTensorReduce) -> None:
    src = read(m, inst.ins[0], "reduce input")
    entry = alu_entry(inst.op)
    if inst.axis in (AxisListType.C, AxisListType.XYZWC):
        if inst.negate:
            raise SimError("a cross-partition (axis C) reduce cannot negate")
        axes = tuple(range(src.ndim)) if inst.axis == AxisListType.XYZWC else (0,)
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
    if variant == Variant.TENSOR_TENSOR_SCAN:
        return tensor_tensor_scan(m, inst)
    data = read(m, inst.ins[0], "tensor-scalar input")
    op0, op1 = alu_entry(inst.op0), alu_entry(inst.op1)
    s0 = scalar(m, inst.ins[1], data)
    if variant == Variant.SCALAR_TENSOR_TENSOR:
        other = read(m, inst.ins[2], "scalar-tensor-tensor second tensor")
        if other.shape != data.shape:
            raise SimError(f"scalar-tensor-tensor tensors differ in shape: {data.shape} "
                           f"vs {other.shape}")
        write_stages(m, inst.outs[0], data, op0, s0, inst.reverse0, op1, other, inst.reverse1)
        return None
    if variant == Variant.REDUCE:  # dst, then the [P,1] fold of each row
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
                 scalar(m, inst.ins[2], data), inst.reverse1)
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
    if inst.acc != Acc.Idle:
        raise SimError(f"tensor_tensor accumulate {inst.acc.name} is not supported")
    a = read(m, inst.ins[0], "tensor_tensor first input")
    b = read(m, inst.ins[1], "tensor_tensor second input")
    if a.shape != b.shape:
        raise SimError(f"tensor_tensor inputs differ in shape: {a.shape} vs {b.shape}")
    write_stage(m, inst.outs[0], alu_entry(inst.op), a, b, False)


def exec_memset(m: Machine, inst: InstMemset) -> None:
    imm = inst.ins[0] if inst.ins else None
    if not isinstance(imm, Immediate):
        raise SimError("memset needs one immediate value")
    view = m.view(inst.outs[0], write=True)
    value = np.asarray(imm.value, np.float32 if isinstance(imm.value, float) else np.int64)
    view[...] = convert(value, view.dtype)


def exec_dma_copy(m: Machine, inst: InstDMACopy) -> None:
    # DMA queues address any SBUF partition: no start-partition rule (Machine.view)
    src = read(m, inst.ins[0], "copy source", dma=True)
    if inst.compute_op == AluOpType.bypass:
        write(m, inst.outs[0], src, dma=True)
        return
    current = m.view(inst.outs[0], write=False, dma=True)
    if current.size != src.size:
        raise SimError(f"copy-accumulate of {src.shape} into {current.shape}")
    write(m, inst.outs[0], apply_alu(alu_entry(inst.compute_op), current, src.reshape(current.shape)),
          dma=True)


def exec_tensor_copy(m: Machine, inst: InstTensorCopy) -> None:
    write(m, inst.outs[0], read(m, inst.ins[0], "copy source"))


def exec_iota(m: Machine, inst: InstIota) -> None:
    dst = inst.outs[0]
    parts = dst.ap[0][1]
    values = np.int64(inst.offset) + np.arange(parts, dtype=np.int64).reshape(
        (parts,) + (1,) * len(inst.pattern)) * inst.channel_multiplier
    for axis, (step, num) in enumerate(inst.pattern, start=1):
        shape = [1] * (len(inst.pattern) + 1)
        shape[axis] = num
        values = values + np.arange(num, dtype=np.int64).reshape(shape) * step
    write(m, dst, values)


# each executor takes an instance of its key class: a relation the value type cannot state
EXECUTORS: dict[type[Inst], Callable[[Machine, Any], None]] = {
    InstActivation: exec_activation,
    InstReadActivationAccumulator: exec_read_act_accumulator,
    InstDveReadAccumulator: exec_dve_read_accumulator,
    InstReciprocal: exec_reciprocal,
    InstExponential: exec_exponential,
    InstTensorReduce: exec_tensor_reduce,
    InstTensorScalarPtr: exec_tensor_scalar_ptr,
    InstTensorScalarCache: exec_tensor_scalar_cache,
    InstTensorTensor: exec_tensor_tensor,
    InstMemset: exec_memset,
    InstDMACopy: exec_dma_copy,
    InstTensorCopy: exec_tensor_copy,
    InstIota: exec_iota,
    **TENSOR_ENGINE_EXECUTORS,
}
EXECUTORS.update(VECTOR_EXECUTORS)
EXECUTORS.update(RANDOM_EXECUTORS)


# ---------------------------------------------------------------- whole programs

def execute(m: Machine, inst: Inst) -> None:
    """Run one instruction; any fault becomes a SimError naming it (describe_inst)."""
    if (fn := EXECUTORS.get(type(inst))) is None:
        raise SimError(f"{describe_inst(inst)}: opcode {type(inst).__name__} is not implemented")
    try:
        m.begin(inst)
        fn(m, inst)
        m.finish()
    except SimIndexError as err:
        raise SimIndexError(f"{describe_inst(inst)}: {err}", err.element, err.size) from None
    except SimError as err:
        raise SimError(f"{describe_inst(inst)}: {err}") from None
    except (IndexError, TypeError, AttributeError) as err:
        raise SimError(f"{describe_inst(inst)}: malformed operands: {err}") from None


_DEFAULT: list[Machine] = []


def default_machine() -> Machine:
    """One Machine per process, reused (its 52 MB of SBUF / PSUM state is allocated once)."""
    if not _DEFAULT:
        _DEFAULT.append(Machine())
    return _DEFAULT[0]


def simulate(program: Program, inputs: Mapping[str, np.ndarray],
             machine: Machine | None = None, uninit: str = "error") -> dict[str, np.ndarray]:
    """Run `program` on `inputs` (by kernel input name); outputs by kernel output name.
    `uninit` ("error" | "warn" | "ignore") is what undefined data reaching HBM does
    (tilecc/definedness.py)."""
    m = machine if machine is not None else default_machine()
    m.uninit = uninit
    m.reset()
    plan = plan_columns(program)
    for loc in program.memory_locations:
        m.place(loc, None if plan is None else plan.base.get(loc.name))
    known = {t.name for t in program.inputs}
    if unknown := sorted(set(inputs) - known):
        raise SimError(f"unknown input {unknown[0]!r}; the kernel's inputs are "
                       f"{sorted(known)}")
    for tensor in program.inputs:
        if tensor.name not in inputs:
            raise SimError(f"missing input {tensor.name!r}")
        value = np.asarray(inputs[tensor.name])
        dtype = numpy_dtype(tensor.dtype)
        if value.shape != tuple(tensor.shape) or value.dtype != dtype:
            raise SimError(f"input {tensor.name!r} is {value.dtype}{list(value.shape)}; "
                           f"the kernel expects {dtype}{list(tensor.shape)}")
        hbm = hbm_elements(m, tensor.name, value.size)
        hbm[...] = value.reshape(hbm.shape)
        hbm_shadow(m, tensor.name, hbm.shape[1])[...] = 0xFF   # inputs are defined
    index = 0
    try:
        # inf / NaN results are the machine's semantics; one BLAS thread: tilecc/blas_threads.py
        with np.errstate(all="ignore"), one_blas_thread():
            if plan is None or not plan.fresh:
                for index, inst in enumerate(program.instructions):
                    execute(m, inst)
            else:
                for index, inst in enumerate(program.instructions):
                    for name in plan.fresh.get(index, ()):
                        m.forget(name)
                    execute(m, inst)
    except (SimError, OverflowError) as err:
        inst = program.instructions[index]
        if isinstance(err, SimError) and inst.pos is not None:
            raise   # located at the kernel line already (describe_inst)
        # no kernel line: name the instruction as the BIR file holds it
        raise SimError(f"instructions[{index}] ({inst.name}): {err}") from None
    outputs: dict[str, np.ndarray] = {}
    for tensor in program.outputs:
        size = int(np.prod(tensor.shape))
        values = hbm_elements(m, tensor.name, size)
        outputs[tensor.name] = values.copy().reshape(tensor.shape)
    return outputs


def hbm_shadow(m: Machine, name: str, per: int) -> np.ndarray:
    """The shadow bytes of the first `per` elements of each partition of HBM tensor `name`."""
    pl = m.placement(name)
    return pl.written[:, : per * pl.itemsize]


def hbm_elements(m: Machine, name: str, size: int) -> np.ndarray:
    """The first size/partitions elements of each partition of HBM tensor `name`."""
    pl = m.placement(name)
    if pl.loc.kind != MemoryKind.HBM:
        raise SimError(f"kernel argument {name!r} is not an HBM tensor")
    parts = pl.loc.partitions
    per = size // parts if parts else 0
    if per * parts != size or per > pl.row:
        raise SimError(f"kernel argument {name!r} of {size} elements does not fit its HBM "
                       f"tensor ({parts} x {pl.row})")
    dtype = numpy_dtype(pl.loc.dtype)
    return np.ndarray((parts, per), dtype, buffer=pl.data, strides=(pl.data.shape[1], pl.itemsize))
