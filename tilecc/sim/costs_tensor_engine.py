"""Estimated engine cycles of the Tensor Engine family, from the NKI ISA reference's
"Estimated instruction cost" formulas (nki.isa.nc_matmul and nki.isa.nc_transpose pages,
https://awsdocs-neuron.readthedocs-hosted.com/en/v2.26.1/nki/api/generated/nki.isa.nc_matmul.html
and .../nki.isa.nc_transpose.html). Estimates, labelled as such; averages over many
back-to-back instructions of one shape, as the pages say.

Contract: `COSTS` maps an instruction class to its cost in engine cycles:
- MatMult: max(min(64, N_stationary), N_moving) Tensor Engine cycles for fp8 / bf16 / fp16
  / tf32 inputs, four times that with a float32 input (N_* = elements per partition);
  a transposing MatMult (nc_transpose on the Tensor Engine) max(P, min(64, F)) with P the
  data's partitions and F its elements per partition;
- Transpose (Vector Engine): max(MIN_II, N), MIN_II = 64, N = elements per partition.
DmaTranspose and IndirectDMACopy have no published formula and are not in the table.
"""

from __future__ import annotations

from collections.abc import Callable

from tilecc.bir.enums import BirDtype
from tilecc.bir.inst import AccessPattern, Argument, Inst
from tilecc.bir.inst_tensor_engine import InstMatMult, InstTranspose

MIN_II = 64


def _free(arg: Argument) -> int:
    n = 1
    if isinstance(arg, AccessPattern):
        for _, num in arg.ap[1:]:
            n *= num
    return n


def _partitions(arg: Argument) -> int:
    return arg.ap[0][1] if isinstance(arg, AccessPattern) else 1


def matmult_cycles(inst: Inst) -> float:
    stationary, moving = inst.ins[0], inst.ins[1]
    if isinstance(inst, InstMatMult) and inst.is_transpose:
        return float(max(_partitions(stationary), min(64, _free(stationary))))
    cycles = max(min(64, _free(stationary)), _free(moving))
    fp32 = any(isinstance(a, AccessPattern) and a.dtype == BirDtype.float32
               for a in (stationary, moving))
    return float(4 * cycles if fp32 else cycles)


def transpose_cycles(inst: Inst) -> float:
    return float(max(MIN_II, _free(inst.ins[0])))


COSTS: dict[type[Inst], Callable[[Inst], float]] = {
    InstMatMult: matmult_cycles, InstTranspose: transpose_cycles,
}
