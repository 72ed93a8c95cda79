"""Simulator executors of the activation family: activation (and activate2), exponential,
reciprocal, and the instructions that drain the accumulator registers.

Contract: `exec_*(machine, inst)` runs one instruction of its class through the operand
helpers of sim/operands.py; arithmetic is float32 (sim/alu.py, sim/activation.py) and the
result is converted to the destination AP's dtype. An activation with an accumulate
command, and an exponential, fold the float32 row results into the ACT / DVE
accumulator registers before the output conversion; a bound accumulator AP then receives
the registers, and Read*Accumulator drains them into their AP. Semantics: bir/inst.py
(fields) and reference/klr-bir.md "NKI instruction semantics".
"""

from __future__ import annotations

import numpy as np

from tilecc.bir.enums import EngineAccumulationType as Acc
from tilecc.bir.inst import (AccessPattern, Immediate, Inst, InstActivation,
                             InstDveReadAccumulator, InstExponential,
                             InstReadActivationAccumulator, InstReciprocal)
from tilecc.errors import SimError
from tilecc.sim.activation import ACTIVATION_TABLE, apply_activation
from tilecc.sim.alu import ALU_TABLE, alu_entry, broadcasts_to, to_f32
from tilecc.sim.machine import Machine
from tilecc.sim.operands import (accumulate, apart, f32_immediate, lanes, read, read_registers,
                                 rows_of, scalar, stage, write)

F32 = np.float32
F32_DTYPE = np.dtype(F32)
Value = np.ndarray
IDLE = Acc.Idle   # read once: `Enum.member` costs ~10x a global (Python 3.11)


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
            scale, acc_args = f32_immediate(inst.scale), inst.ins[2:]
        target = m.view(dst, write=True, whole=True)   # written in place, or by `write`
        x, s, b = to_f32(src), to_f32(scale), bias_operand(to_f32(bias), src.size)
        if (target.dtype is F32_DTYPE and inst.func in ACTIVATION_TABLE
                and x.shape == target.shape and broadcasts_to(x.shape, s.shape, x.shape)
                and broadcasts_to(x.shape, b.shape, x.shape) and apart(inst.ins[1], b, dst, target)):
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
    if inst.acc == IDLE and not acc_args:
        return
    lane = lanes(m, dst)
    if inst.acc != IDLE:
        accumulate(m, m.act_acc, lane, inst.acc, reduce_entry, rows_of(out))
    for arg in acc_args:
        if isinstance(arg, Immediate):
            raise SimError("the activation accumulator must be a tensor access")
        write(m, arg, read_registers(m, m.act_acc, lane).reshape(-1, 1))


# below this many elements per bias value the uniformity test costs more than it saves
_UNIFORM_BIAS_MIN = 64


def bias_operand(bias: Value, size: int) -> Value:
    """The float32 bias to add over a tile of `size` elements: a [P, 1] column holding one value (bit for
    bit) in every partition becomes that value as a 0-d array, which numpy adds to a large
    tile in about half the time of the broadcast column (the same value on every element)."""
    if bias.ndim == 0 or bias.size * _UNIFORM_BIAS_MIN > size:
        return bias
    bits = bias.view(np.uint32)
    if (bits == bits.flat[0]).all():
        return np.array(bias.flat[0])
    return bias


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
