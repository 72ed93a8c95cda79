"""Structural comparison of HLO modules for tests: a canonical, order-insensitive summary."""

from __future__ import annotations

from tilecc.hlo.ir import HloInstruction, HloModule


def instruction_summary(inst: HloInstruction) -> tuple:
    literal = inst.literal
    return (
        inst.name, inst.opcode.mnemonic, inst.shape.to_text(),
        tuple(o.name for o in inst.operands),
        tuple(c.name for c in inst.called_computations()),
        inst.dimensions, inst.slice_starts, inst.slice_limits, inst.slice_strides,
        inst.replica_groups.to_text() if inst.replica_groups is not None else None,
        inst.channel_id, inst.use_global_device_ids, inst.constrain_layout,
        None if literal is None else (literal.dtype.str, literal.tobytes()),
        inst.parameter_number, inst.tuple_index, inst.iota_dimension,
        inst.comparison_direction, inst.comparison_type, inst.metadata,
        tuple(sorted(inst.attributes.items())),
        tuple(p.name for p in inst.control_predecessors),
    )


def module_summary(module: HloModule) -> tuple:
    """Everything a module means, independent of computation and instruction order."""
    comps = []
    for comp in module.computations:
        insts = tuple(sorted(instruction_summary(i) for i in comp.instructions))
        comps.append((comp.name, comp is module.entry, comp.root.name if comp.root else None,
                      tuple(p.name for p in comp.parameters), comp.execution_thread, insts))
    return (module.name, module.replica_count, module.num_partitions,
            module.entry_computation_layout, module.input_output_alias,
            module.frontend_attributes, tuple(sorted(module.header_attributes.items())),
            module.stack_frames, tuple(sorted(comps)))
