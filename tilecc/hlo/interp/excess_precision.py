"""Where XLA CPU keeps a bf16 instruction's value in f32 (excess precision), made explicit.

XLA CPU computes bf16 arithmetic in f32: FloatNormalization (with the base FloatSupport of
bf16, xla/hlo/transforms/simplifiers/float_normalization.cc) gives every such instruction
an f32 result and a convert back to bf16 for its users -- except a user that is itself a
convert to f32 (xla_allow_excess_precision, on by default), which then reads the f32 result
unrounded. Before that, AllReducePromotion (bf16 -> f32) turns a bf16 all-reduce of one
operand, or a reduce-scatter, into convert(all-reduce-f32(convert-to-f32(operand))), so an
all-reduce of such an instruction sums the unrounded f32 values and rounds once. Only those
direct users see the excess precision: an operand that is a convert to bf16 of an f32 value
stays rounded, and so does every other user. All measured on jaxlib 0.10.2 (bf16 multiply,
exp, divide and dot feeding a convert to f32 or an all-reduce; an all-reduce feeding a
multiply or a convert; a multiply feeding an add; a tuple all-reduce of two multiplies,
not promoted).

Contract: `f32_replacement(inst)` is None when `inst` reads its operands as written, else
the instructions to evaluate in its place, operands first: fresh instructions outside any
computation (named after the ones they stand for, so an error names an instruction of the
module), whose operands are instructions of `inst`'s computation or earlier ones of the
list; the last one's value is `inst`'s value. The module is not changed.
"""

from __future__ import annotations

from tilecc.hlo.interp.reduce import reducer_opcode
from tilecc.hlo.interp.values import detached_copy
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import TYPE_PRESERVING_BINARY, TYPE_PRESERVING_UNARY, HloOpcode as Op
from tilecc.hlo.types import PrimitiveType, Shape, array_shape

_BF16, _F32 = PrimitiveType.BF16, PrimitiveType.F32
COMPUTED_IN_F32 = (TYPE_PRESERVING_UNARY | TYPE_PRESERVING_BINARY | {Op.DOT}) - {
    Op.REDUCE_PRECISION, Op.CLZ, Op.SHIFT_LEFT, Op.SHIFT_RIGHT_ARITHMETIC,
    Op.SHIFT_RIGHT_LOGICAL, Op.NOT, Op.AND, Op.OR, Op.XOR, Op.POPULATION_COUNT, Op.MULHI}
"""The bf16 opcodes XLA CPU evaluates as the f32 op of the widened operands: elementwise
arithmetic and dot (the bitwise ones have no bf16 form; reduce-precision keeps its own
mantissa)."""
_PROMOTED_COLLECTIVES = frozenset({Op.ALL_REDUCE, Op.ALL_REDUCE_START, Op.REDUCE_SCATTER})
"""all-reduce-start too: XLA CPU makes it a synchronous all-reduce before the promotion."""


def _bf16_array(inst: HloInstruction) -> bool:
    shape = inst.shape
    return shape.is_array and shape.element_type == _BF16 and not any(shape.dynamic_dims)


def _f32(inst: HloInstruction) -> Shape:
    return array_shape(_F32, inst.shape.dims)


def computed_in_f32(inst: HloInstruction) -> bool:
    """A bf16 elementwise instruction whose f32 result a convert-to-f32 user reads."""
    return inst.opcode in COMPUTED_IN_F32 and _bf16_array(inst) and \
        all(_bf16_array(op) for op in inst.operands)


def _in_f32(inst: HloInstruction) -> list[HloInstruction]:
    """`inst` (computed_in_f32) with an f32 result, after the converts of its operands."""
    widened = [detached_copy(op, Op.CONVERT, _f32(op), [op]) for op in inst.operands]
    return widened + [detached_copy(inst, inst.opcode, _f32(inst), widened)]


def f32_replacement(inst: HloInstruction) -> list[HloInstruction] | None:
    """See the module contract."""
    if inst.opcode is Op.CONVERT and inst.shape.element_type == _F32 and \
            len(inst.operands) == 1 and computed_in_f32(inst.operands[0]):
        return _in_f32(inst.operands[0])
    if inst.opcode in _PROMOTED_COLLECTIVES and _bf16_array(inst) and \
            len(inst.operands) == 1 and computed_in_f32(inst.operands[0]) and \
            inst.to_apply is not None and reducer_opcode(inst.to_apply) is not None:
        operand = _in_f32(inst.operands[0])
        promoted = detached_copy(inst, inst.opcode, _f32(inst), [operand[-1]])
        return operand + [promoted, detached_copy(inst, Op.CONVERT, inst.shape, [promoted])]
    return None
