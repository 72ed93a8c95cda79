"""DecomposeIntAllReduce (spec 000, registry order 88, aws_neuron_decompose_int_all_reduce).

Gate (spec 000, DecomposeIntAllReduce::InstructionMatchesPattern, byte for byte):
    opcode == all-reduce
    and the root of to_apply is add
    and IsIntegralType(element type)          (PRED counts; a tuple shape never passes)
    and TrueNumDimensions(shape) == 0          (s32[], s32[1], s32[1,1] ...)
    and (et - 4) & ~4 == 0                     (et in {S32 = 4, U32 = 8})

Rewrite (spec 000 "Algorithm -- rewrite", in the valid-HLO form fixed in DESIGN.md), with
G participants per replica group:
    rs  = reshape(operand) -> et[]                  (rank 0: the spec's reshape to [2] would
    bc  = broadcast(rs), dimensions={} -> et[2]      not keep the element count)
    ag  = all-gather(bc), dimensions={0} -> et[2G]   replica_groups as written (explicit, iota,
                                                     empty, mesh), channel_id,
                                                     use_global_device_ids, constrain_layout
    acc = slice(ag)[0:2]; for b in 2, 4, ..., 2G-2: acc = add(acc, slice(ag)[b:b+2])
    out = reshape(slice(acc)[1:2]) -> the all-reduce's shape
Both lanes of every gathered pair hold the same value, so either lane of the accumulator is
the sum; the spec leaves "acc or tail" open (INFERRED, MEDIUM) and DESIGN.md fixes lane 1
of the accumulator, which computes the all-reduce's result, wrap-around included.

G is the size of the first replica group (the spec's `replica_groups[0].size()`); for
empty groups it is the number of participants of the collective's group mode:
replica_count (cross-replica), replica_count * num_partitions (flattened ids), and in
cross-replica-and-partition mode (channel_id without global ids) every group spans all
partitions, so G is multiplied by num_partitions -- the only reading under which the
all-gather's [2G] shape is valid HLO when num_partitions > 1 (with one partition it is the
spec's G; checked on XLA, which rejects the unmultiplied size there). The verifier and
create_all_gather size the all-gather by the same rule (replica_groups.participants_per_group,
XLA's GetSubgroupSize). An all-reduce written without replica_groups gets
`replica_groups={}` on its all-gather. Every new instruction carries the metadata;
the instructions are made with tilecc.hlo.builders (XLA's hlo_creation_utils), traced once
per expansion_key and stamped per match (tilecc.passes.expansion_template). The rewrite
adds 2G + 3 instructions; a G that makes more than tilecc.limits' "rewrite" bound is a
LimitError before any is made.
"""

from __future__ import annotations

from collections.abc import Hashable

from tilecc.errors import PassError
from tilecc.hlo import replica_groups as rg
from tilecc.hlo.builders import create_all_gather, make_binary, make_broadcast, make_reshape, \
    make_slice
from tilecc.hlo.ir import HloInstruction, HloModule
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.types import array_shape, is_integral
from tilecc.limits import beyond, limit
from tilecc.passes.pass_base import OpExpanderPass


def participants_per_group(inst: HloInstruction, module: HloModule) -> int:
    """G: how many devices one replica group of this collective spans (see the docstring)."""
    return rg.participants_per_group(inst.replica_groups, inst.channel_id,
                                     inst.use_global_device_ids, module.replica_count,
                                     module.num_partitions)


class DecomposeIntAllReduce(OpExpanderPass):
    name = "decompose-int-all-reduce"
    gate_opcodes = frozenset({HloOpcode.ALL_REDUCE})

    def instruction_matches_pattern(self, inst: HloInstruction) -> bool:
        if inst.opcode is not HloOpcode.ALL_REDUCE:
            return False
        comp = inst.to_apply
        if comp is None or comp.root is None or comp.root.opcode is not HloOpcode.ADD:
            return False
        et = inst.shape.element_type
        if not is_integral(et):
            return False
        if inst.shape.true_num_dimensions() != 0:
            return False
        return ((int(et) - 4) & ~4) == 0

    def expansion_key(self, inst: HloInstruction) -> Hashable:
        return (inst.shape, tuple(op.shape for op in inst.operands), inst.replica_groups,
                inst.channel_id, inst.use_global_device_ids, inst.constrain_layout)

    def build_expansion(self, inst: HloInstruction) -> HloInstruction | None:
        assert self.instruction_matches_pattern(inst), f"{inst.name} does not match the gate"
        comp = inst.parent
        assert comp is not None and comp.parent is not None
        if len(inst.operands) != 1:
            raise PassError(f"{inst.name}: an array-shaped all-reduce takes one operand, "
                            f"found {len(inst.operands)}")
        et = inst.shape.element_type
        group = participants_per_group(inst, comp.parent)
        if 2 * group + 3 > limit("rewrite"):   # the unrolled add chain grows with G
            raise beyond("rewrite", 2 * group + 3, f"{inst.name} (all-reduce over {group} "
                         "devices per replica group)")
        meta = inst.metadata
        # an all-reduce written without replica_groups means all participants, as `{}` does
        groups = inst.replica_groups if inst.replica_groups is not None else \
            rg.ReplicaGroups.empty()

        # MakeReshapeHlo to rank 0, then MakeBroadcastHlo(rs, {}, [2])
        scalar = make_reshape(array_shape(et, ()), inst.operands[0], meta)
        bcast = make_broadcast(scalar, (), (2,), meta)
        # CreateAllGather([2G], {bc}, dim 0, replica_groups, constrain_layout, channel_id,
        # use_global_device_ids)
        gathered = create_all_gather(array_shape(et, (2 * group,)), bcast, 0, groups,
                                     inst.constrain_layout, inst.channel_id,
                                     inst.use_global_device_ids, meta)
        # the unrolled kAdd loop: MakeSliceHlo [0:2], then per chunk MakeSliceHlo [b:b+2] and
        # MakeBinaryHlo(kAdd, acc, chunk)
        acc = make_slice(gathered, (0,), (2,), (1,), meta)
        for b in range(2, 2 * group, 2):
            chunk = make_slice(gathered, (b,), (b + 2,), (1,), meta)
            acc = make_binary(HloOpcode.ADD, acc, chunk, meta)
        # MakeSliceHlo lane [1:2] of the accumulator, MakeReshapeHlo to the all-reduce's shape
        last = make_slice(acc, (1,), (2,), (1,), meta)
        return make_reshape(inst.shape, last, meta)
