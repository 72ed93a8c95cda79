"""Simulator executors that fill and move data: memset, iota, DMA copy (with its
copy-accumulate) and the engine tensor copy.

Contract: `exec_*(machine, inst)` runs one instruction of its class through the operand
helpers of sim/operands.py; values are converted to the destination AP's dtype. A DMA
reads and writes any SBUF partition (no start-partition rule, `dma=True`); an engine
copy obeys the engines' partition rules (Machine.view). iota computes in int64 before
the conversion. Semantics: bir/inst.py (fields) and reference/klr-bir.md "NKI
instruction semantics".
"""

from __future__ import annotations

import numpy as np

from tilecc.bir.enums import AluOpType
from tilecc.bir.inst import Immediate, InstDMACopy, InstIota, InstMemset, InstTensorCopy
from tilecc.errors import SimError
from tilecc.sim.alu import alu_entry, apply_alu
from tilecc.sim.dtypes import convert
from tilecc.sim.machine import Machine
from tilecc.sim.operands import read, write

BYPASS = AluOpType.bypass   # read once: `Enum.member` costs ~10x a global (Python 3.11)


def exec_memset(m: Machine, inst: InstMemset) -> None:
    imm = inst.ins[0] if inst.ins else None
    if not isinstance(imm, Immediate):
        raise SimError("memset needs one immediate value")
    view = m.view(inst.outs[0], write=True, whole=True)
    value = np.asarray(imm.value, np.float32 if isinstance(imm.value, float) else np.int64)
    view[...] = convert(value, view.dtype)


def exec_dma_copy(m: Machine, inst: InstDMACopy) -> None:
    # DMA queues address any SBUF partition: no start-partition rule (Machine.view)
    src = read(m, inst.ins[0], "copy source", dma=True)
    if inst.compute_op == BYPASS:
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
