"""Verifier: structural invariants and shape rules for the opcodes tilecc builds or runs.

Contract: `verify_module(module)` returns None for a valid module and otherwise raises
VerifyError("computation/instruction: what is wrong"). It checks
- structure: an entry exists; each computation has a root among its instructions and
  parameters numbered 0..n-1; operands and control predecessors live in the same
  computation; use lists agree with operand lists; instruction names are unique;
  called computations belong to the module, the entry is never called and no computation
  calls itself, directly or through others (hlo/run_limits.py); a computation
  called by async-start / -update / -done holds only its parameters and root (XLA's rule);
- shapes, by tilecc.hlo.shape_rules' per-opcode table (XLA's ShapeVerifier rules):
  elementwise ops, compare, select, clamp, convert, reshape, broadcast, slice,
  concatenate, transpose, reduce, all-reduce, all-gather, reduce-scatter, tuple,
  get-tuple-element, parameter, constant, iota, replica-id and partition-id, fft,
  triangular-solve and scan (tilecc.hlo.op_configs), batch-norm-training / -inference /
  -grad (tilecc.hlo.batch_norm_shapes), plus the
  collective group mode ((no channel, use_global_device_ids) is invalid) and the arity of
  reducer computations. `allow_mixed_precision=True` is XLA's option of that name: a
  reducer may compute in another floating type than its data.
Other opcodes are accepted as read (their shapes are XLA's business).
"""

from __future__ import annotations

from tilecc.errors import VerifyError
from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule
from tilecc.hlo.opcodes import ASYNC, HloOpcode
from tilecc.hlo.shape_rules import RuleContext, check_shape, fail
from tilecc.hlo.run_limits import check_call_graph

O = HloOpcode


def verify_module(module: HloModule, allow_mixed_precision: bool = False) -> None:
    """Raise VerifyError naming the first broken instruction; see the module docstring."""
    if module.entry is None or module.entry not in module.computations:
        raise VerifyError(f"module {module.name}: no entry computation")
    comps = set(map(id, module.computations))
    names: dict[str, str] = {}
    for comp in module.computations:
        _verify_structure(comp, comps, module, names)
    check_call_graph(module)
    ctx = RuleContext(module, allow_mixed_precision)
    for comp in module.computations:
        for inst in comp.instructions:
            check_shape(inst, ctx)


def _verify_structure(comp: HloComputation, comps: set[int], module: HloModule,
                      names: dict[str, str]) -> None:
    insts = comp.instructions
    if not insts:
        raise VerifyError(f"computation {comp.name} has no instructions")
    if comp.root is None or comp.root.parent is not comp:
        raise VerifyError(f"computation {comp.name}: the root is not one of its instructions")
    for i, param in enumerate(comp.parameters):
        if param is None or param.parameter_number != i or param.parent is not comp:
            raise VerifyError(f"computation {comp.name}: parameter {i} is missing or misnumbered")
    for inst in insts:
        if inst.name in names:
            raise fail(inst, f"name also used in computation {names[inst.name]}")
        names[inst.name] = comp.name
        for op in inst.operands:
            if op.parent is not comp:
                raise fail(inst, f"operand {op.name} is not in computation {comp.name}")
            if inst not in op.users:
                raise fail(inst, f"missing from the users of its operand {op.name}")
        for user in inst.users:
            if inst not in user.operands:
                raise fail(inst, f"lists {user.name} as a user, but is not its operand")
        for pred in inst.control_predecessors:
            if pred.parent is not comp:
                raise fail(inst, f"control predecessor {pred.name} is in another computation")
        for callee in inst.called_computations():
            if id(callee) not in comps:
                raise fail(inst, f"calls {callee.name}, which is not in the module")
            if callee is module.entry:
                raise fail(inst, "calls the entry computation")
            if inst.opcode in ASYNC:
                _verify_async_computation(inst, callee)


def _verify_async_computation(inst: HloInstruction, callee: HloComputation) -> None:
    """XLA's verifier: an async op's computation holds only its parameters and root."""
    extra = [i.name for i in callee.instructions
             if i is not callee.root and i.opcode is not O.PARAMETER]
    if extra:
        raise fail(inst, f"asynchronous computation {callee.name} expected to contain only "
                          f"the root and parameter instructions, also has {', '.join(extra[:5])}"
                          + (" ..." if len(extra) > 5 else ""))
