"""Result shapes the HLO text may leave out, inferred as XLA's parser does.

Contract: `infer_shape(inst, called)` returns the shape XLA's parser gives an instruction
written without one (`t = tuple(a, b)`, `ROOT w = while(t), ...`), from its operands'
shapes, its attributes and `called` (the computation named by to_apply=, for call; the first
branch, for conditional), or
raises ValueError saying why it cannot (an opcode XLA does not infer, operands that do not
fit). Inferred array shapes keep the operands' layout when the dims are the operands',
else XLA's default layout. Covered: elementwise unary / binary ops (compare gives pred,
abs / real / imag of a complex its part type, is-finite pred), select, clamp, copy,
tuple, get-tuple-element, after-all, while, call, conditional, optimization-barrier,
dot, reduce.
"""

from __future__ import annotations

import re

from tilecc.hlo.ir import HloComputation, HloInstruction
from tilecc.hlo.opcodes import (ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, TYPE_PRESERVING_BINARY,
                                TYPE_PRESERVING_UNARY, HloOpcode as Op)
from tilecc.hlo.types import PrimitiveType, Shape

_PART_TYPE = {PrimitiveType.C64: PrimitiveType.F32, PrimitiveType.C128: PrimitiveType.F64}
_INTS = re.compile(r"-?\d+")


def _with_type(shape: Shape, element_type: PrimitiveType) -> Shape:
    return Shape(element_type, shape.dims, shape.dynamic_dims, shape.layout)


def _array_operand(inst: HloInstruction, i: int) -> Shape:
    if i >= len(inst.operands):
        raise ValueError(f"{inst.opcode.mnemonic} needs operand {i} to infer its shape")
    shape = inst.operands[i].shape
    if not shape.is_array:
        raise ValueError(f"operand {i} of {inst.opcode.mnemonic} is {shape.to_text()}, "
                         "not an array")
    return shape


def _unary(inst: HloInstruction) -> Shape:
    operand = _array_operand(inst, 0)
    t = operand.element_type
    op = inst.opcode
    if op is Op.ABS or op is Op.REAL or op is Op.IMAG:
        return _with_type(operand, _PART_TYPE.get(t, t))
    if op is Op.IS_FINITE:
        return _with_type(operand, PrimitiveType.PRED)
    if op in TYPE_PRESERVING_UNARY:
        return operand
    raise ValueError(f"{op.mnemonic} changes the element type: write the result shape")


def _binary(inst: HloInstruction) -> Shape:
    a, b = _array_operand(inst, 0), _array_operand(inst, 1)
    if a.dims != b.dims:
        raise ValueError(f"operands {a.to_text()} and {b.to_text()} of "
                         f"{inst.opcode.mnemonic} have different dimensions")
    if inst.opcode is Op.COMPARE:
        return _with_type(a, PrimitiveType.PRED)
    if inst.opcode in TYPE_PRESERVING_BINARY:
        if a.element_type != b.element_type:
            raise ValueError(f"operand types of {inst.opcode.mnemonic} differ: "
                             f"{a.to_text()} vs {b.to_text()}")
        return a
    raise ValueError(f"{inst.opcode.mnemonic} changes the element type: write the result shape")


def _dims_attr(inst: HloInstruction, key: str) -> list[int]:
    return [int(v) for v in _INTS.findall(inst.attributes.get(key, ""))]


def _dot(inst: HloInstruction) -> Shape:
    lhs, rhs = _array_operand(inst, 0), _array_operand(inst, 1)
    lb, lc = _dims_attr(inst, "lhs_batch_dims"), _dims_attr(inst, "lhs_contracting_dims")
    rb, rc = _dims_attr(inst, "rhs_batch_dims"), _dims_attr(inst, "rhs_contracting_dims")
    for dims, shape in ((lb + lc, lhs), (rb + rc, rhs)):
        if any(not 0 <= d < shape.rank for d in dims) or len(set(dims)) != len(dims):
            raise ValueError(f"dot dimension numbers {dims} do not fit {shape.to_text()}")
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise ValueError("dot needs as many lhs as rhs batch and contracting dimensions")
    if lhs.element_type != rhs.element_type:
        raise ValueError(f"dot operand types differ ({lhs.to_text()} vs {rhs.to_text()}): "
                         "write the result shape")
    dims = [lhs.dims[d] for d in lb]
    dims += [n for d, n in enumerate(lhs.dims) if d not in lb and d not in lc]
    dims += [n for d, n in enumerate(rhs.dims) if d not in rb and d not in rc]
    return Shape.array(lhs.element_type, dims)


def _reduce(inst: HloInstruction) -> Shape:
    half = len(inst.operands) // 2
    if half < 1 or len(inst.operands) != 2 * half:
        raise ValueError("reduce takes N inputs and N init values")
    dims = set(inst.dimensions or ())
    outs = []
    for data, init in zip(inst.operands[:half], inst.operands[half:]):
        shape = data.shape
        if not shape.is_array or any(not 0 <= d < shape.rank for d in dims):
            raise ValueError(f"dimensions {sorted(dims)} do not fit {shape.to_text()}")
        outs.append(Shape.array(init.shape.element_type,
                                [n for d, n in enumerate(shape.dims) if d not in dims]))
    return outs[0] if half == 1 else Shape.tuple(outs)


def infer_shape(inst: HloInstruction, called: HloComputation | None) -> Shape:
    """The shape XLA's parser infers for `inst`; see the module contract."""
    op = inst.opcode
    if op is Op.COPY or op in ELEMENTWISE_UNARY:
        return _unary(inst)
    if op in ELEMENTWISE_BINARY:
        return _binary(inst)
    if op is Op.SELECT or op is Op.CLAMP:
        if len(inst.operands) != 3:
            raise ValueError(f"{op.mnemonic} takes 3 operands")
        return inst.operands[1].shape
    if op is Op.TUPLE:
        return Shape.tuple([o.shape for o in inst.operands])
    if op is Op.GET_TUPLE_ELEMENT:
        src = inst.operands[0].shape if inst.operands else None
        index = inst.tuple_index
        if src is None or not src.is_tuple or index is None \
                or not 0 <= index < len(src.tuple_shapes):
            raise ValueError(f"index {index} is not an element of the operand's tuple shape")
        return src.tuple_shapes[index]
    if op is Op.AFTER_ALL:
        return Shape.token()
    if op is Op.WHILE or op is Op.OPTIMIZATION_BARRIER:
        if len(inst.operands) != 1:
            raise ValueError(f"{op.mnemonic} takes 1 operand")
        return inst.operands[0].shape
    if op is Op.CALL or op is Op.CONDITIONAL:
        if called is None or called.root is None:
            raise ValueError(f"{op.mnemonic} infers its shape from a computation defined "
                             "before it")
        return called.root.shape
    if op is Op.REDUCE:
        return _reduce(inst)
    if op is Op.DOT:
        return _dot(inst)
    raise ValueError(f"XLA does not infer the shape of {op.mnemonic}: write it")


BUILT_BY_XLA = frozenset({Op.SEND, Op.SEND_DONE})
"""Opcodes whose shape XLA's parser builds itself, whatever the text writes."""


def xla_built_shape(inst: HloInstruction) -> Shape:
    """The shape XLA's parser gives a BUILT_BY_XLA instruction (CreateSend /
    CreateSendDone): send is (its first operand's shape, u32[], token[]) -- the operand
    order decides, not the written shape --, send-done token[]."""
    if inst.opcode is Op.SEND and inst.operands:
        return Shape.tuple([inst.operands[0].shape, Shape.array(PrimitiveType.U32, ()),
                            Shape.token()])
    return Shape.token() if inst.opcode is Op.SEND_DONE else inst.shape
