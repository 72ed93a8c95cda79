"""Which of its four datapaths an InstTensorScalarPtr (IT29) selects: the one classifier.

Spec 003 collapses four KLR operators onto IT29 and tells them apart by flags and by a
second output (codegenTensorScalarReduce: acc = ZeroAccumulate plus a second addOutput;
codegenNcScalarTensorTensor: is_scalar_tensor_tensor; the scan: is_tensor_tensor_scan and
is_scalar_tensor_tensor). Contract: `tensor_scalar_variant(inst)` returns the variant, or
raises TensorScalarVariantError (a VerifyError; its message names the flags) when the
flags and outputs select none:
- TENSOR_TENSOR_SCAN: is_tensor_tensor_scan (which needs is_scalar_tensor_tensor too),
  one output;
- SCALAR_TENSOR_TENSOR: is_scalar_tensor_tensor alone, one output;
- REDUCE: neither flag, two outputs [dst, red], acc ZeroAccumulate;
- PLAIN: neither flag, one output, acc Idle.
negate_second_output negates the second output, so it belongs to REDUCE only. The verifier,
the simulator, the cost model and the BIR JSON reader all decide through this function.
"""

from __future__ import annotations

from enum import Enum

from tilecc.bir.enums import EngineAccumulationType as Acc
from tilecc.bir.inst import InstTensorScalarPtr
from tilecc.errors import VerifyError


class TensorScalarVariant(Enum):
    PLAIN = "tensor_scalar"
    REDUCE = "tensor_scalar_reduce"
    SCALAR_TENSOR_TENSOR = "scalar_tensor_tensor"
    TENSOR_TENSOR_SCAN = "tensor_tensor_scan"


# read once: `Enum.member` costs ~10x a global (Python 3.11), and the simulator asks per instruction
_IDLE, _ZERO_ACCUMULATE = Acc.Idle, Acc.ZeroAccumulate
_PLAIN, _REDUCE, _STT, _SCAN = (TensorScalarVariant.PLAIN, TensorScalarVariant.REDUCE,
                                TensorScalarVariant.SCALAR_TENSOR_TENSOR,
                                TensorScalarVariant.TENSOR_TENSOR_SCAN)


class TensorScalarVariantError(VerifyError):
    """Flags and outputs of a TensorScalarPtr that select no variant."""


def tensor_scalar_variant(inst: InstTensorScalarPtr) -> TensorScalarVariant:
    outs = len(inst.outs)
    if inst.is_tensor_tensor_scan or inst.is_scalar_tensor_tensor:
        if inst.is_tensor_tensor_scan and not inst.is_scalar_tensor_tensor:
            raise TensorScalarVariantError(
                "is_tensor_tensor_scan needs is_scalar_tensor_tensor (a scan sets both)")
        variant = _SCAN if inst.is_tensor_tensor_scan else _STT
        if outs != 1:
            raise TensorScalarVariantError(f"{variant.value} writes 1 output, found {outs}")
    elif outs == 2 and inst.acc == _ZERO_ACCUMULATE:
        return _REDUCE
    elif outs == 2 or inst.acc == _ZERO_ACCUMULATE:
        raise TensorScalarVariantError(
            f"a tensor_scalar_reduce has two outputs and acc ZeroAccumulate, found {outs} "
            f"output(s) and acc {inst.acc.name}")
    elif outs != 1 or inst.acc != _IDLE:
        raise TensorScalarVariantError(
            f"a plain tensor_scalar has one output and acc Idle, found {outs} output(s) and "
            f"acc {inst.acc.name}")
    else:
        variant = _PLAIN
    if inst.negate_second_output:
        raise TensorScalarVariantError(
            f"negate_second_output needs a second output: {variant.value} has one")
    return variant
