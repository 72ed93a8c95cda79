"""What XLA's parser refuses beyond the grammar: per-opcode checks made while reading.

Contract: `check_read(inst)` is called on each instruction as the parser creates it
(operands and attributes read, called computations not yet resolved) and returns None or
the message of the ParseError XLA's parser raises (or the CHECK it aborts on) for it;
`check_async(inst)` is called once the module's computations are resolved, for async-start /
-update / -done. Rules (hlo_parser.cc and the Create* functions it calls):
- reshape / dynamic-reshape keep the element count; dynamic-reshape has one size operand
  per result dimension;
- all-gather / reduce-scatter / all-to-all name their dimension (`dimensions={}` is out of
  range in XLA);
- recv and infeed have tuple shapes, infeed a non-empty one;
- conditional has a scalar pred / s32 first operand;
- `<op>-start/-update/-done` sugar only wraps opcodes without async forms of their own, and
  an opcode of fixed arity gets that many operands;
- async-start's shape is ((operands...), outputs, state...), its wrapped computation takes
  its operands; async-update / -done take one async-start / -update operand, an update keeps
  its operand's shape, and both keep its wrapped opcode, computation and thread; an
  async-start's computation is wrapped by no other async-start;
- convolution labels / windows and attributes newer than the pinned XLA:
  tilecc.hlo.parse_rules_attrs.
"""

from __future__ import annotations

import re
from typing import Callable

from tilecc.errors import ParseError
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.lexer import Cursor
from tilecc.hlo.opcodes import HloOpcode as Op, lookup_opcode
from tilecc.hlo.parse_rules_attrs import check_convolution, newer_attribute
from tilecc.hlo.types import UNBOUNDED, PrimitiveType, Shape, compatible


def _static_extent(shape: Shape) -> int:
    count = 1
    for d in shape.dims:
        count *= d
    return count


def _reshape(inst: HloInstruction) -> str | None:
    src = inst.operands[0].shape if inst.operands else None
    if src is None or not (src.is_array and inst.shape.is_array) or UNBOUNDED in src.dims:
        return None  # XLA checks no count against an unbounded `?` size
    if _static_extent(src) != _static_extent(inst.shape):
        return (f"reshape of {src.to_text()} ({_static_extent(src)} elements) to "
                f"{inst.shape.to_text()} ({_static_extent(inst.shape)} elements)")
    return None


def _dynamic_reshape(inst: HloInstruction) -> str | None:
    if not inst.operands:
        return "dynamic-reshape needs the operand and one size per result dimension"
    if len(inst.operands) - 1 != inst.shape.rank:
        return (f"dynamic-reshape to {inst.shape.to_text()} needs {inst.shape.rank} size "
                f"operands, got {len(inst.operands) - 1}")
    return _reshape(inst)


def _named_dimension(inst: HloInstruction) -> str | None:
    if inst.dimensions is not None and not inst.dimensions:
        return f"{inst.opcode.mnemonic} needs one dimension in dimensions={{...}}, got none"
    return None


def _tuple_result(inst: HloInstruction) -> str | None:
    if not inst.shape.is_tuple:
        return f"{inst.opcode.mnemonic} returns a tuple, got {inst.shape.to_text()}"
    if inst.opcode is Op.INFEED and not inst.shape.tuple_shapes:
        return "infeed must have a non-empty tuple shape"
    return None


def _conditional(inst: HloInstruction) -> str | None:
    if not inst.operands:
        return "conditional needs a branch selector operand"
    sel = inst.operands[0].shape
    if sel.rank or sel.element_type not in (PrimitiveType.PRED, PrimitiveType.S32):
        return f"the first operand of conditional must be a scalar pred or s32, got {sel}"
    return None


_API_VERSIONS = frozenset({"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                           "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"})


def _custom_call(inst: HloInstruction) -> str | None:
    version = inst.attributes.get("api_version")
    if version is not None and version not in _API_VERSIONS:
        return (f"unknown custom-call api_version {version} (expected one of "
                + ", ".join(sorted(_API_VERSIONS)) + ")")
    constraints = inst.attributes.get("operand_layout_constraints")
    if constraints is not None:
        shapes = _shapes_of(constraints)
        if shapes is None:
            return f"operand_layout_constraints {constraints} is not a list of shapes"
        if len(shapes) != len(inst.operands):
            return (f"{len(inst.operands)} operand layout constraints expected, "
                    f"{len(shapes)} given")
        for k, (shape, op) in enumerate(zip(shapes, inst.operands)):
            if not compatible(shape, op.shape):
                return (f"operand layout constraint {shape.to_text()} for operand {k} does "
                        f"not fit the operand's shape {op.shape.to_text()}")
    return None


def _shapes_of(text: str) -> list[Shape] | None:
    """The shapes of `{shape, shape, ...}`, or None when it is not that."""
    if not (text.startswith("{") and text.endswith("}")):
        return None
    cursor = Cursor(text[1:-1], "<operand_layout_constraints>")
    shapes: list[Shape] = []
    try:
        while cursor.peek():
            if shapes:
                cursor.expect(",", "between shapes")
                cursor.skip()
            shapes.append(cursor.parse_shape())
    except ParseError:
        return None
    return shapes


_ACCURACY = re.compile(r"\{\s*(?:mode\s*=\s*(?:highest|default)|tolerance\s*=\s*\{\s*"
                       r"(?:(?:atol|rtol|ulps)\s*=\s*[-+0-9.eE]+\s*,?\s*)+\})\s*\}")
# the unary ops XLA's parser lets carry result_accuracy=
_ACCURATE = frozenset({Op.EXP, Op.EXPM1, Op.LOG, Op.LOG1P, Op.RSQRT, Op.SQRT, Op.CBRT,
                       Op.TANH, Op.TAN, Op.LOGISTIC, Op.ERF, Op.SIN, Op.COS})


def _result_accuracy(inst: HloInstruction) -> str | None:
    value = inst.attributes.get("result_accuracy")
    if value is None:
        return None
    if inst.opcode not in _ACCURATE:
        return f"{inst.opcode.mnemonic} takes no result_accuracy"
    if _ACCURACY.fullmatch(value) is None:
        return (f"result_accuracy {value} is not {{mode=highest|default}} or "
                "{tolerance={atol=..., rtol=..., ulps=...}}")
    return None


def _async_start(inst: HloInstruction) -> str | None:
    shape = inst.shape
    if not shape.is_tuple or len(shape.tuple_shapes) < 2 or not shape.tuple_shapes[0].is_tuple:
        return ("async-start's shape must be ((operands...), outputs, state...), got "
                f"{shape.to_text()}")
    return _sugar_arity(inst)


def _sugar_arity(inst: HloInstruction) -> str | None:
    wrapped = lookup_opcode(inst.async_wrapped) if inst.async_wrapped else None
    if wrapped is not None and wrapped.arity is not None and inst.opcode is Op.ASYNC_START \
            and len(inst.operands) != wrapped.arity:
        return (f"{inst.async_wrapped} takes {wrapped.arity} operands, "
                f"{inst.async_wrapped}-start has {len(inst.operands)}")
    return None


def _async_chain(inst: HloInstruction) -> str | None:
    if len(inst.operands) != 1 or inst.operands[0].opcode not in (Op.ASYNC_START,
                                                                  Op.ASYNC_UPDATE):
        return (f"{inst.opcode.mnemonic} takes one operand, an async-start or async-update")
    if inst.opcode is Op.ASYNC_UPDATE and inst.shape != inst.operands[0].shape:
        return (f"async-update's shape {inst.shape.to_text()} differs from its operand's "
                f"{inst.operands[0].shape.to_text()}")
    return newer_attribute(inst)


_READ_RULES: dict[Op, Callable[[HloInstruction], str | None]] = {
    Op.RESHAPE: _reshape, Op.DYNAMIC_RESHAPE: _dynamic_reshape,
    Op.ALL_GATHER: _named_dimension, Op.REDUCE_SCATTER: _named_dimension,
    Op.ALL_TO_ALL: _named_dimension, Op.RECV: _tuple_result, Op.INFEED: _tuple_result,
    Op.CONDITIONAL: _conditional, Op.ASYNC_START: _async_start,
    Op.ASYNC_UPDATE: _async_chain, Op.ASYNC_DONE: _async_chain, Op.CUSTOM_CALL: _custom_call,
    Op.CONVOLUTION: check_convolution, Op.TOPK: newer_attribute,
    Op.COLLECTIVE_BROADCAST: newer_attribute,
    **{op: _result_accuracy for op in _ACCURATE},
}


RULE_OPCODES = frozenset(_READ_RULES)
"""The opcodes with a rule of their own (any other is only checked for result_accuracy)."""


def check_read(inst: HloInstruction) -> str | None:
    """The error XLA's parser gives `inst` as read, or None; see the module contract."""
    rule = _READ_RULES.get(inst.opcode)
    if rule is not None:
        return rule(inst)
    if "result_accuracy" in inst.attributes:
        return _result_accuracy(inst)
    return None


def sugar_is_allowed(wrapped: str) -> bool:
    """`<wrapped>-start/-update/-done` is XLA's async sugar only for an opcode without an
    async form of its own (all-reduce-start, copy-done, send-done, ... exist as opcodes)."""
    return not any(lookup_opcode(wrapped + suffix) is not None
                   for suffix in ("-start", "-done", "-update"))


def check_async(inst: HloInstruction, wrapped: set[int] | None = None) -> str | None:
    """The error XLA gives an async op once computations are known, or None. `wrapped`
    collects the ids of the computations async-starts checked so far wrap."""
    if inst.opcode is Op.ASYNC_START:
        callee = inst.calls[0] if inst.calls else None
        # (the sugared `<op>-start` form is not checked: XLA reads `fusion-start()` of a
        # two-parameter computation)
        if callee is not None and inst.async_wrapped is None and \
                len(callee.parameters) != len(inst.operands):
            return (f"async-start has {len(inst.operands)} operands, its computation "
                    f"{callee.name} takes {len(callee.parameters)}")
        if callee is not None and wrapped is not None:
            if id(callee) in wrapped:
                return f"computation {callee.name} is called by more than one async op"
            wrapped.add(id(callee))
        return None
    source = inst.operands[0]
    while source.opcode is Op.ASYNC_UPDATE and source.operands and not source.calls:
        source = source.operands[0]  # the start of the chain names the computation
    if inst.async_wrapped and source.async_wrapped and inst.async_wrapped != source.async_wrapped:
        return (f"expected the async wrapped opcode to be {source.async_wrapped}, but got "
                f"{inst.async_wrapped}")
    if inst.calls and source.calls and inst.calls[0] is not source.calls[0]:
        return (f"expected async_wrapped_computation to be {source.calls[0].name}, but got "
                f"{inst.calls[0].name}")
    thread = inst.attributes.get("async_execution_thread")
    if thread is not None and thread != source.attributes.get("async_execution_thread",
                                                              '"main"'):
        return (f"expected async_execution_thread to be "
                f"{source.attributes.get('async_execution_thread', 'main')}, but got {thread}")
    return None


_SHAPE_INDEX = r"\{\s*(?:-?\d+\s*(?:,\s*-?\d+\s*)*)?\}"
_ALIAS = re.compile(r"\{\s*(?:" + _SHAPE_INDEX + r"\s*:\s*\(\s*\d+\s*,\s*" + _SHAPE_INDEX
                    + r"\s*(?:,\s*(?:may|must)-alias\s*)?\)\s*(?:,\s*(?=\{)|(?=\})))*\}")
_DONOR = re.compile(r"\{\s*(?:\(\s*\d+\s*,\s*" + _SHAPE_INDEX
                    + r"\s*\)\s*(?:,\s*(?=\()|(?=\})))*\}")
HEADER_FORMS = {
    "input_output_alias": (_ALIAS, "{ {output index}: (parameter, {index}[, may-alias]), ... }"),
    "buffer_donor": (_DONOR, "{ (parameter, {index}), ... }"),
}
"""Header attributes XLA's parser reads by a grammar: name -> (pattern, expected form)."""


def check_header(key: str, value: str) -> str | None:
    """The error XLA's parser gives header attribute `key`'s value, or None."""
    form = HEADER_FORMS.get(key)
    if form is not None and form[0].fullmatch(value) is None:
        return f"{key} must read {form[1]}, got {value}"
    return None
