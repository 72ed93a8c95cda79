"""Deep copies of HLO modules, without a text round trip.

Contract: `clone_module(module)` returns a module equal to `module` in everything the
printer prints (names, order, shapes, attributes, metadata, header, literals) that shares
no mutable IR object with it: every computation and instruction is new, operand / user /
control lists and called computations point into the copy, and the name uniquers are
copied, so a pass run on one never changes the other. Immutable values are shared (Shape,
ReplicaGroups, attribute and literal texts) and so are constant arrays, which the IR only
ever replaces (`inst.literal = ...`), never writes into.
"""

from __future__ import annotations

import copy
from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule

# HloInstruction fields that hold other IR objects; the rest are copied as they are
_LINKS = frozenset({"operands", "users", "parent", "to_apply", "condition", "body",
                    "branch_computations", "calls", "control_predecessors",
                    "control_successors", "attributes", "_mark"})
_PLAIN = tuple(name for name in HloInstruction.__slots__ if name not in _LINKS)


def clone_module(module: HloModule) -> HloModule:
    """A deep copy of `module`; see the module contract."""
    out = HloModule(module.name)
    for key in ("replica_count", "num_partitions", "entry_computation_layout",
                "input_output_alias", "frontend_attributes", "stack_frames"):
        setattr(out, key, getattr(module, key))
    out.header_attributes = dict(module.header_attributes)
    out.header_order = list(module.header_order)
    out._names = copy.deepcopy(module._names)
    out._comp_names = copy.deepcopy(module._comp_names)

    comps: dict[int, HloComputation] = {}
    for comp in module.computations:
        new = HloComputation(comp.name, comp.execution_thread)
        new.is_fusion_computation = comp.is_fusion_computation
        new.parent = out
        comps[id(comp)] = new
        out.computations.append(new)
    out.entry = comps[id(module.entry)] if module.entry is not None else None

    insts: dict[int, HloInstruction] = {}
    for comp in module.computations:
        new_comp = comps[id(comp)]
        for inst in comp.instructions:
            copy_ = HloInstruction(inst.name, inst.opcode, inst.shape)
            for name in _PLAIN:
                setattr(copy_, name, getattr(inst, name))
            copy_.attributes = dict(inst.attributes)
            copy_.parent = new_comp
            new_comp._instructions[copy_] = None
            insts[id(inst)] = copy_
        new_comp.parameters = [insts[id(p)] for p in comp.parameters]
        new_comp.root = insts[id(comp.root)] if comp.root is not None else None

    def mapped(c: HloComputation) -> HloComputation:
        return comps.get(id(c), c)  # a computation of another module stays (verifier's case)

    for comp in module.computations:
        for inst in comp.instructions:
            copy_ = insts[id(inst)]
            copy_.operands = [insts[id(op)] for op in inst.operands]
            copy_.users = [insts[id(u)] for u in inst.users]
            if inst.to_apply is not None:
                copy_.to_apply = mapped(inst.to_apply)
            if inst.condition is not None:
                copy_.condition = mapped(inst.condition)
            if inst.body is not None:
                copy_.body = mapped(inst.body)
            if inst.branch_computations is not None:
                copy_.branch_computations = [mapped(c) for c in inst.branch_computations]
            if inst.calls is not None:
                copy_.calls = [mapped(c) for c in inst.calls]
            if inst.control_predecessors:
                copy_.control_predecessors = [insts[id(p)] for p in inst.control_predecessors]
            if inst.control_successors is not None:
                copy_.control_successors = [insts[id(s)] for s in inst.control_successors]
    return out
