"""The shape rule of batch-norm-training / -inference / -grad (XLA's ShapeInference::
InferBatchNorm{Training,Inference,Grad}Shape), for the verifier.

Contract: `batch_norm_problem(inst)` returns None when the instruction fits XLA's rule,
else one sentence saying what is wrong. The rule: attributes epsilon=<float> and
feature_index=<int> with 0 <= feature_index < the operand's rank; a floating-point
operand; every per-feature operand (scale, offset, mean, variance) rank 1 of the operand's
element type and of the feature dimension's size; grad's grad_output of the operand's
shape; the result the operand's shape (inference) or the tuple (operand shape, feature
vector, feature vector) (training, grad).
"""

from __future__ import annotations

from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import Shape, compatible, is_floating, primitive_type_name

# opcode -> the operand indices that are per-feature vectors; the others are full-shaped
_FEATURE_OPERANDS = {Op.BATCH_NORM_TRAINING: (1, 2), Op.BATCH_NORM_INFERENCE: (1, 2, 3, 4),
                     Op.BATCH_NORM_GRAD: (1, 2, 3)}


def batch_norm_problem(inst: HloInstruction) -> str | None:
    """What is wrong with a batch-norm instruction's attributes and shapes, or None."""
    try:
        feature = int(inst.attributes["feature_index"])
        float(inst.attributes["epsilon"])
    except (KeyError, ValueError):
        return "needs the attributes epsilon=<float> and feature_index=<int>"
    operand = inst.operands[0].shape
    if not operand.is_array or not is_floating(operand.element_type):
        return f"operand {operand.to_text()} is not a floating-point array"
    if not 0 <= feature < operand.rank:
        return f"feature_index={feature} is outside the operand's rank {operand.rank}"
    t, size = operand.element_type, operand.dims[feature]
    feature_shape = Shape.array(t, (size,))
    for k in _FEATURE_OPERANDS[inst.opcode]:
        shape = inst.operands[k].shape
        if not shape.is_array or shape.element_type != t or shape.dims != (size,):
            return (f"operand {k} is {shape.to_text()}, expected {primitive_type_name(t)}"
                    f"[{size}] (the operand's feature dimension {feature})")
    if inst.opcode is Op.BATCH_NORM_GRAD and not compatible(inst.operands[4].shape, operand):
        return (f"grad_output {inst.operands[4].shape.to_text()} is not the operand's shape "
                f"{operand.to_text()}")
    if inst.opcode is Op.BATCH_NORM_INFERENCE:
        expected = operand
    else:
        expected = Shape.tuple((operand, feature_shape, feature_shape))
    if not compatible(inst.shape, expected):
        return f"result is {inst.shape.to_text()}, expected {expected.to_text()}"
    return None
