"""Printer: HloModule -> the text XLA's `HloModule::ToString()` produces (the long form).

Contract: the output is XLA's long form -- `%` before every name, computation signatures
`%name (p: s32[]) -> s32[] {`, no operand shapes -- which jaxlib's `hlo_module_from_text`
accepts, and which equals XLA's own `to_string()` on modules XLA printed (tested on every
fixture). Printing is stable: print(parse(print(m))) == print(m).
- Operand lists and tuple shapes carry XLA's `/*index=N*/` before every fifth element.
- Computations print in their stored order when every callee comes before its callers,
  else callees first (XLA's parser rejects a call of a computation defined later).
- Instructions print in their stored order when that order defines every operand (and
  control predecessor) before its use; otherwise, in a scheduled module
  (`is_scheduled=true`: the text is the schedule), in the stored order with each
  out-of-place instruction pulled in just before its first user (`schedule_order`), and
  in any other module in def-use post-order.
- Attributes print in XLA's order: opcode-specific typed ones (slice, index, iota_dimension,
  direction/type, channel_id, replica_groups, constrain_layout, dimensions,
  use_global_device_ids -- reduce-scatter puts dimensions last), the other opcode-specific ones verbatim in the order read, called
  computations, sharding / frontend_attributes, control-predecessors, statistics /
  result_accuracy / origin, metadata, then backend_config. Defaults (false flags,
  stride 1) are omitted.
- A constant prints the literal text it was read from; a literal set in code prints via
  tilecc.hlo.literal.format_literal.
"""

from __future__ import annotations

from operator import attrgetter

from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule
from tilecc.hlo.literal import format_literal
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.types import Shape, index_join, tuple_text

# Verbatim attributes XLA prints after the called computations (HloInstruction::
# PrintExtraAttributes, checked against XLA's printer): sharding and frontend attributes
# before control-predecessors; statistics, result_accuracy and origin after them; then
# metadata and backend_config. Everything else (parameter_replication, ...) is opcode-
# specific and comes first, in the order read.
_TRAILING = ("sharding", "frontend_attributes")
_AFTER_CONTROL = ("statistics", "result_accuracy", "origin")
_AFTER_METADATA = ("backend_config",)
_NOT_OPCODE_SPECIFIC = frozenset(_TRAILING + _AFTER_CONTROL + _AFTER_METADATA)
_NAME_OF = attrgetter("name")
_CONSTANT, _PARAMETER = HloOpcode.CONSTANT, HloOpcode.PARAMETER  # faster than enum attributes


def print_module(module: HloModule) -> str:
    """The module as XLA's long-form text (see the module docstring)."""
    header = "HloModule " + module.name
    for key in _header_keys(module):
        header += f", {key}={_header_value(module, key)}"
    parts = [header, "\n\n"]
    if module.stack_frames:
        parts += [module.stack_frames, "\n\n\n"]
    for comp in computations_in_print_order(module):
        parts.append(print_computation(comp, comp is module.entry))
        parts.append("\n\n")
    return "".join(parts)


def _header_keys(module: HloModule) -> list[str]:
    keys = [k for k in module.header_order if _header_value(module, k) is not None]
    for key in ("replica_count", "num_partitions"):
        if key not in keys and getattr(module, key) != 1:
            keys.append(key)
    for key in ("entry_computation_layout", "input_output_alias", "frontend_attributes"):
        if key not in keys and getattr(module, key) is not None:
            keys.append(key)
    keys += [k for k in module.header_attributes if k not in keys]
    return keys


def _header_value(module: HloModule, key: str) -> str | None:
    if key in ("replica_count", "num_partitions", "entry_computation_layout",
               "input_output_alias", "frontend_attributes"):
        value = getattr(module, key)
        return None if value is None else str(value)
    return module.header_attributes.get(key)


def shape_without_layout(shape: Shape) -> str:
    """Signature spelling: `s32[2,3]`, `(s32[], f32[2])` (XLA prints no layouts there)."""
    if shape.is_tuple:
        return tuple_text([shape_without_layout(s) for s in shape.tuple_shapes])
    return shape.with_layout(None).to_text()


def computations_in_print_order(module: HloModule) -> list[HloComputation]:
    """Stored order if every computation is defined before its callers (XLA's parser needs
    that), else callees-first post-order."""
    seen: set[HloComputation] = set()
    for comp in module.computations:
        for inst in comp._instructions:
            # the five fields called_computations() reads, without building its list
            if (inst.to_apply is None and inst.condition is None and inst.body is None
                    and not inst.branch_computations and not inst.calls):
                continue
            if not seen.issuperset(inst.called_computations()):
                return module.computations_post_order()
        seen.add(comp)
    return module.computations


def instructions_in_print_order(comp: HloComputation) -> list[HloInstruction]:
    """Stored order if it defines before use; else, in a scheduled module, the stored order
    with dependencies pulled forward (`schedule_order`); else def-use post-order."""
    insts = comp.instructions
    seen: set[HloInstruction] = set()  # instructions hash by identity
    defined, define = seen.issuperset, seen.add
    for inst in insts:
        if not defined(inst.operands) or \
                (inst.control_predecessors and not defined(inst.control_predecessors)):
            return _fallback_order(comp)
        define(inst)
    return insts


def _fallback_order(comp: HloComputation) -> list[HloInstruction]:
    module = comp.parent
    if module is not None and module.header_attributes.get("is_scheduled") == "true":
        return schedule_order(comp)
    return comp.post_order()


def schedule_order(comp: HloComputation) -> list[HloInstruction]:
    """A def-before-use order that keeps the relative stored order of every instruction
    already in place: a depth-first walk seeded in stored order that emits an instruction's
    not-yet-emitted operands (first to last) and control predecessors just before it. A
    scheduled module's text is its schedule ("scheduled ones keep source order"), and a pass
    appends what it adds, so each new instruction lands just before its first user and the
    untouched ones keep their order. (XLA's HloSchedule::Update keeps that relative order
    too but places new instructions as soon as their operands are ready; both are valid
    schedules of the same graph.)"""
    state: dict[HloInstruction, bool] = {}  # False: operands being visited; True: emitted
    order: list[HloInstruction] = []
    for start in comp.instructions:
        if start in state:
            continue
        stack = [start]
        while stack:
            node = stack[-1]
            done = state.get(node)
            if done is not None:
                stack.pop()
                if not done:
                    state[node] = True
                    order.append(node)
                continue
            state[node] = False
            deps = [*node.operands, *node.control_predecessors]
            stack.extend(d for d in reversed(deps) if d not in state)
    return order


def print_computation(comp: HloComputation, is_entry: bool = False) -> str:
    params = ", ".join(f"{p.name}: {shape_without_layout(p.shape)}" for p in comp.parameters)
    result = shape_without_layout(comp.root.shape) if comp.root is not None else "()"
    head = f"{'ENTRY ' if is_entry else ''}%{comp.name} ({params}) -> {result}"
    root = comp.root
    lines = [head + " {"]
    # instructions_in_print_order's test, run while printing: one walk over the stored order
    seen: set[HloInstruction] = set()
    defined, define = seen.issuperset, seen.add
    for inst in comp._instructions:
        if not defined(inst.operands) or \
                (inst.control_predecessors and not defined(inst.control_predecessors)):
            lines[1:] = [print_instruction(i, i is root) for i in _fallback_order(comp)]
            break
        define(inst)
        lines.append(print_instruction(inst, inst is root))
    if comp.execution_thread is not None:
        lines.append(f'}}, execution_thread="{comp.execution_thread}"')
    else:
        lines.append("}")
    return "\n".join(lines)


def print_instruction(inst: HloInstruction, is_root: bool = False) -> str:
    """One line: `  [ROOT ]%name = shape opcode(operands), attributes`."""
    opcode = inst.opcode
    ops = inst.operands
    count = len(ops)
    if count == 2:  # most instructions: one f-string, no join
        first, second = ops
        args = f"%{first.name}, %{second.name}"
    elif count == 1:
        args = "%" + ops[0].name
    elif count:
        args = "%" + ", %".join(map(_NAME_OF, ops)) if count <= 5 else \
            index_join(["%" + op.name for op in ops])  # with /*index=N*/ markers
    elif opcode is _CONSTANT:
        if inst.literal_text is not None:
            args = inst.literal_text
        else:
            lit = inst.literal
            args = "" if lit is None else format_literal(lit, inst.shape)
    elif opcode is _PARAMETER:
        args = str(inst.parameter_number)
    else:
        args = ""
    mnemonic = opcode.mnemonic if inst.async_wrapped is None else \
        inst.async_wrapped + opcode.mnemonic[5:]  # negate-start: async-start wrapping negate
    # the fields _attributes_text prints but metadata, tested here so that most lines skip
    # the call: a line with no attribute or only metadata (every line of a jax dump) is
    # what _attributes_text would give for it, without building its list
    if (inst.attributes or inst.dimensions is not None or inst.to_apply is not None
            or inst.calls or inst.condition is not None or inst.body is not None
            or inst.branch_computations
            or inst.control_predecessors or inst.replica_groups is not None
            or inst.channel_id is not None or inst.use_global_device_ids
            or inst.constrain_layout or opcode in _TYPED_PRINTERS):
        attributes = _attributes_text(inst)
    elif inst.metadata is not None:
        attributes = ", metadata=" + inst.metadata
    else:
        attributes = ""
    return (f"  {'ROOT ' if is_root else ''}%{inst.name} = {inst.shape.to_text()} "
            f"{mnemonic}({args}){attributes}")


def _attributes_text(inst: HloInstruction) -> str:
    """`, key=value, ...` in XLA's order (see the module docstring), or ""."""
    out: list[str] = []
    _TYPED_PRINTERS.get(inst.opcode, _print_collective)(inst, out)
    attrs = inst.attributes
    if attrs:
        out += [f"{k}={v}" for k, v in attrs.items() if k not in _NOT_OPCODE_SPECIFIC]
    _called_computations(inst, out)
    if attrs:
        out += [f"{k}={attrs[k]}" for k in _TRAILING if k in attrs]
    if inst.control_predecessors:
        out.append("control-predecessors={"
                   + ", ".join("%" + p.name for p in inst.control_predecessors) + "}")
    if attrs:
        out += [f"{k}={attrs[k]}" for k in _AFTER_CONTROL if k in attrs]
    if inst.metadata is not None:
        out.append("metadata=" + inst.metadata)
    if attrs:
        out += [f"{k}={attrs[k]}" for k in _AFTER_METADATA if k in attrs]
    return ", " + ", ".join(out) if out else ""


def _called_computations(inst: HloInstruction, out: list[str]) -> None:
    op = inst.opcode
    if inst.to_apply is not None:
        out.append("to_apply=%" + inst.to_apply.name)
    if inst.condition is not None:
        out.append("condition=%" + inst.condition.name)
    if inst.body is not None:
        out.append("body=%" + inst.body.name)
    branches = inst.branch_computations
    if branches:
        pred_form = (len(branches) == 2 and inst.operands
                     and inst.operands[0].shape.element_type.name == "PRED")
        if pred_form:
            out.append(f"true_computation=%{branches[0].name}")
            out.append(f"false_computation=%{branches[1].name}")
        else:
            out.append("branch_computations={" + ", ".join("%" + c.name for c in branches) + "}")
    calls = inst.calls
    if calls:
        if op is HloOpcode.SELECT_AND_SCATTER:
            out.append(f"select=%{calls[0].name}")
            out.append(f"scatter=%{calls[1].name}")
        elif op is HloOpcode.CUSTOM_CALL:
            out.append("called_computations={" + ", ".join("%" + c.name for c in calls) + "}")
        elif len(calls) == 1:
            out.append("calls=%" + calls[0].name)
        else:
            out.append("calls={" + ", ".join("%" + c.name for c in calls) + "}")


_INTS_TEXT: dict[tuple[int, ...], str] = {}
"""`{0,1}` by its tuple: a module spells the same few dimension lists on many lines."""


def _ints(values: tuple[int, ...]) -> str:
    text = _INTS_TEXT.get(values)
    if text is None:
        if len(_INTS_TEXT) >= 4096:
            _INTS_TEXT.clear()
        text = _INTS_TEXT[values] = "{" + ",".join(map(str, values)) + "}"
    return text


def _print_slice(inst: HloInstruction, out: list[str]) -> None:
    if inst.slice_starts is None or inst.slice_limits is None:
        return
    strides = inst.slice_strides or (1,) * len(inst.slice_starts)
    # XLA omits the strides only when every one is 1: `[0:6:2], [1:2:1]` keeps the `:1`
    if all(s == 1 for s in strides):
        dims = [f"[{a}:{b}]" for a, b in zip(inst.slice_starts, inst.slice_limits)]
    else:
        dims = [f"[{a}:{b}:{s}]" for a, b, s in zip(inst.slice_starts, inst.slice_limits,
                                                   strides)]
    out.append("slice={" + ", ".join(dims) + "}")


def _print_gte(inst: HloInstruction, out: list[str]) -> None:
    if inst.tuple_index is not None:
        out.append(f"index={inst.tuple_index}")


def _print_iota(inst: HloInstruction, out: list[str]) -> None:
    if inst.iota_dimension is not None:
        out.append(f"iota_dimension={inst.iota_dimension}")


def _print_compare(inst: HloInstruction, out: list[str]) -> None:
    if inst.comparison_direction is not None:
        out.append(f"direction={inst.comparison_direction}")
    if inst.comparison_type is not None:
        out.append(f"type={inst.comparison_type}")


def _print_collective(inst: HloInstruction, out: list[str]) -> None:
    # XLA: channel_id (HloChannelInstruction), replica_groups and constrain_layout
    # (HloCollectiveInstruction), then the op's own: dimensions, use_global_device_ids.
    # Also the default for every other opcode (most have only `dimensions`).
    if inst.channel_id is not None:
        out.append(f"channel_id={inst.channel_id}")
    if inst.replica_groups is not None:
        out.append("replica_groups=" + inst.replica_groups.to_text())
    if inst.constrain_layout:
        out.append("constrain_layout=true")
    if inst.dimensions is not None:
        out.append("dimensions=" + _ints(inst.dimensions))
    if inst.use_global_device_ids:
        out.append("use_global_device_ids=true")


def _print_reduce_scatter(inst: HloInstruction, out: list[str]) -> None:
    # HloReduceScatterInstruction prints the all-reduce attributes first, then dimensions.
    if inst.channel_id is not None:
        out.append(f"channel_id={inst.channel_id}")
    if inst.replica_groups is not None:
        out.append("replica_groups=" + inst.replica_groups.to_text())
    if inst.constrain_layout:
        out.append("constrain_layout=true")
    if inst.use_global_device_ids:
        out.append("use_global_device_ids=true")
    if inst.dimensions is not None:
        out.append("dimensions=" + _ints(inst.dimensions))


_TYPED_PRINTERS = {
    HloOpcode.REDUCE_SCATTER: _print_reduce_scatter,
    HloOpcode.SLICE: _print_slice,
    HloOpcode.GET_TUPLE_ELEMENT: _print_gte,
    HloOpcode.IOTA: _print_iota,
    HloOpcode.COMPARE: _print_compare,
}
