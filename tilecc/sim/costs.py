"""Estimated cycles of the compute-family instructions, from the NKI ISA reference.

Source: the "Estimated instruction cost" paragraph of each instruction's page in the NKI ISA
reference (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/nki/api/generated/
nki.isa.<instruction>.html, the Inf2 / Trn1 / Trn2 pages, e.g. nki.isa.tensor_scalar.html;
their source is the SDK's general/nki/api/nki/isa/__init__.py). Where N is the number of
elements per partition of the instruction's data operand and MIN_II = 64 cycles ("roughly
64 engine cycles", the minimum initiation interval for small tiles), the pages give:

| BIR instruction       | NKI instruction      | estimated engine cycles                          |
|-----------------------|----------------------|--------------------------------------------------|
| Activation            | activation           | max(MIN_II, N)                                   |
| Activation + accum    | activation_reduce    | max(MIN_II, N) + MIN_II                          |
| TensorScalarPtr       | tensor_scalar        | max(MIN_II, N)                                   |
|   two outputs         | tensor_scalar_reduce | max(MIN_II, N) + MIN_II                          |
|   scalar-tensor-tensor| scalar_tensor_tensor | N if bf16 data and operand1, op0 subtract, op1 mult, N even; else 2N |
|   tensor-tensor scan  | tensor_tensor_scan   | max(MIN_II, 2N)                                  |
| TensorTensor          | tensor_tensor        | max(MIN_II, N) if all bf16 and op add / mult / subtract on contiguous data; else max(MIN_II, 2N) |
| TensorReduce          | tensor_reduce        | N / 2 if input and output bf16 and op add / max; else N |
| Reciprocal            | reciprocal           | max(MIN_II, 8N)                                  |
| Memset                | memset               | max(MIN_II, N / 2) for a zero into bf16 / fp16; else max(MIN_II, N) |
| TensorCopy            | tensor_copy          | max(MIN_II, N)                                   |
| Iota                  | iota                 | 150 + N (GpSimd)                                 |

Choices where the page depends on more than the instruction holds: tensor_tensor's "one
input in PSUM and the other in SBUF" row needs the operands' memories, which an
instruction does not name (only its memrefs), so it is not applied (the bf16 row and the 2N
row are). Instructions whose pages give no formula (Exponential, TensorScalarCache, the
accumulator drains, DMACopy) have no entry: the profile estimates them with its labelled
fallback (sim/profile.py). All figures are estimates from this documented model, not
hardware measurements.
"""

from __future__ import annotations

from collections.abc import Callable

from tilecc.bir.enums import AluOpType, BirDtype, EngineAccumulationType as Acc
from tilecc.bir.inst import (AccessPattern, Immediate, Inst, InstActivation, InstIota, InstMemset,
                             InstReciprocal, InstTensorCopy, InstTensorReduce, InstTensorScalarPtr,
                             InstTensorTensor)
from tilecc.bir.tensor_scalar_variant import TensorScalarVariant as Variant
from tilecc.bir.tensor_scalar_variant import tensor_scalar_variant

MIN_II = 64          # "MIN_II is roughly 64 engine cycles"
GPSIMD_START = 150   # iota: "150 + N GpSimd Engine cycles"
_HALF = (BirDtype.bfloat16, BirDtype.float16)


def elements_per_partition(ap: AccessPattern) -> int:
    """N: the elements per partition of an access (the product of its free pairs' nums)."""
    count = 1
    for _, num in ap.ap[1:]:
        count *= num
    return count


def _data(inst: Inst) -> AccessPattern:
    """The instruction's data operand: its first tensor input, else its first output."""
    return next((a for a in inst.ins if isinstance(a, AccessPattern)), inst.outs[0])


def _n(inst: Inst) -> int:
    return elements_per_partition(_data(inst))


def _contiguous(ap: AccessPattern) -> bool:
    return len(ap.ap) <= 2 and (len(ap.ap) < 2 or ap.ap[1][0] == 1)


def activation_cycles(inst: InstActivation) -> float:
    """activation; activation_reduce when it accumulates (an accumulator AP or a command)."""
    extra = inst.ins[4:] if inst.is_activate2 else inst.ins[2 if inst.scale is not None else 3:]
    reduces = inst.acc != Acc.Idle or any(isinstance(a, AccessPattern) for a in extra)
    return max(MIN_II, _n(inst)) + (MIN_II if reduces else 0)


def tensor_scalar_cycles(inst: InstTensorScalarPtr) -> float:
    """tensor_scalar, tensor_scalar_reduce, scalar_tensor_tensor or tensor_tensor_scan."""
    n, variant = _n(inst), tensor_scalar_variant(inst)
    if variant == Variant.TENSOR_TENSOR_SCAN:
        return max(MIN_II, 2 * n)
    if variant == Variant.SCALAR_TENSOR_TENSOR:
        data, other = inst.ins[0], inst.ins[2]
        fast = (isinstance(data, AccessPattern) and isinstance(other, AccessPattern)
                and data.dtype == other.dtype == BirDtype.bfloat16 and inst.op0 == AluOpType.subtract
                and inst.op1 == AluOpType.mult and n % 2 == 0)
        return n if fast else 2 * n
    return max(MIN_II, n) + (MIN_II if variant == Variant.REDUCE else 0)


_FAST_TENSOR_TENSOR = frozenset({AluOpType.add, AluOpType.mult, AluOpType.subtract})


def tensor_tensor_cycles(inst: InstTensorTensor) -> float:
    n = _n(inst)
    aps = [a for a in (*inst.ins, *inst.outs) if isinstance(a, AccessPattern)]
    fast = (inst.op in _FAST_TENSOR_TENSOR and all(a.dtype == BirDtype.bfloat16 for a in aps)
            and all(_contiguous(a) for a in inst.ins if isinstance(a, AccessPattern)))
    return max(MIN_II, n if fast else 2 * n)


def tensor_reduce_cycles(inst: InstTensorReduce) -> float:
    n = _n(inst)
    data = _data(inst)
    fast = (data.dtype == inst.outs[0].dtype == BirDtype.bfloat16
            and inst.op in (AluOpType.add, AluOpType.max))
    return n / 2 if fast else n


def reciprocal_cycles(inst: InstReciprocal) -> float:
    return max(MIN_II, 8 * _n(inst))


def memset_cycles(inst: InstMemset) -> float:
    n = elements_per_partition(inst.outs[0])
    value = inst.ins[0] if inst.ins else None
    zero = isinstance(value, Immediate) and value.value == 0
    return max(MIN_II, n / 2 if zero and inst.outs[0].dtype in _HALF else n)


def tensor_copy_cycles(inst: InstTensorCopy) -> float:
    return max(MIN_II, _n(inst))


def iota_cycles(inst: InstIota) -> float:
    return GPSIMD_START + elements_per_partition(inst.outs[0])


# each function takes an instance of its key class: a relation the value type cannot state
COSTS: dict[type[Inst], Callable[[Inst], float]] = {
    InstActivation: activation_cycles,        # type: ignore[dict-item]
    InstTensorScalarPtr: tensor_scalar_cycles,  # type: ignore[dict-item]
    InstTensorTensor: tensor_tensor_cycles,   # type: ignore[dict-item]
    InstTensorReduce: tensor_reduce_cycles,   # type: ignore[dict-item]
    InstReciprocal: reciprocal_cycles,        # type: ignore[dict-item]
    InstMemset: memset_cycles,                # type: ignore[dict-item]
    InstTensorCopy: tensor_copy_cycles,       # type: ignore[dict-item]
    InstIota: iota_cycles,                    # type: ignore[dict-item]
}
