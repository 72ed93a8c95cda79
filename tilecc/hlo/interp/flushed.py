"""Which f32 / f64 values are known, when a step is built, to hold no subnormal number.

Contract: `known_flushed(inst)` is True only if every value `inst` produces is an f32 / f64
array in which no element is subnormal, whatever the inputs; False says nothing. Float ops
flush their operands and results as XLA CPU does (elementwise._float_op); an operand that
is known flushed need not be flushed again (elementwise.unary_op / binary_op `flushed`),
which saves the float ops of a chain two of their three passes of the check.

Sources of flushed values: the float ops whose result elementwise flushes
(elementwise.flushes_result), dot and convolution of operands of the result type (computed
in that type, then flushed by convert; a wider accumulator could round to a subnormal),
and constants whose literal holds no subnormal. Ops that move or
negate values keep the property of their operand(s): copy, reshape, bitcast, broadcast,
transpose, slice, reverse, negate, abs, select (both branches). The walk through those
stops after DEPTH instructions (a cheap, bounded look when a step is built).
"""

from __future__ import annotations

import numpy as np

from tilecc.hlo.interp.elementwise import flushes_result
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import PrimitiveType

DEPTH = 4
_FLOATS = (PrimitiveType.F32, PrimitiveType.F64)
_PRODUCERS = frozenset({Op.DOT, Op.CONVOLUTION})
_MOVES = frozenset({Op.COPY, Op.RESHAPE, Op.BITCAST, Op.BROADCAST, Op.TRANSPOSE, Op.SLICE,
                    Op.REVERSE, Op.NEGATE, Op.ABS})


def known_flushed(inst: HloInstruction, depth: int = DEPTH) -> bool:
    """True when no element of `inst`'s value can be subnormal; see the module contract."""
    shape = inst.shape
    if not shape.is_array or shape.element_type not in _FLOATS or depth <= 0:
        return False
    opcode = inst.opcode
    if flushes_result(opcode, shape.element_type):
        return True
    if opcode in _PRODUCERS:  # computed in the result type, flushed by convert
        return all(op.shape.element_type == shape.element_type for op in inst.operands)
    if opcode is Op.CONSTANT:
        literal = inst.literal
        if literal is None:
            return False
        tiny = np.finfo(literal.dtype).tiny
        magnitudes = np.abs(np.asarray(literal))
        return not bool(np.any((magnitudes < tiny) & (magnitudes != 0)))
    if opcode in _MOVES and len(inst.operands) == 1:
        operand = inst.operands[0]
        return operand.shape.element_type == shape.element_type and \
            known_flushed(operand, depth - 1)
    if opcode is Op.SELECT and len(inst.operands) == 3:
        return all(known_flushed(op, depth - 1) for op in inst.operands[1:])
    return False


def flushed_operands(inst: HloInstruction) -> tuple[bool, ...]:
    """known_flushed of each operand of `inst`."""
    return tuple(known_flushed(op) for op in inst.operands)
