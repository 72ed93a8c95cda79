"""The replicas and partitions a module's collectives name: the device counts to run it on.

Contract: `devices_needed(module)` returns (replicas, partitions), at least the header's
`replica_count` / `num_partitions`, raised so that every id a collective names exists.
XLA's pass tests often write replica groups for more devices than the header sets (the
header stays at one replica while the groups say {{0,1,2,3}}); XLA CPU compiles the module
for whatever device counts it is given, so the counts are read off the ids, per group mode
(interp.collectives.group_mode, XLA's GetCollectiveOpGroupMode):
- cross-replica and cross-replica-and-partition groups name replicas (replicas >= id + 1);
- cross-partition groups and pairs (all-to-all, collective-broadcast, collective-permute
  with a channel_id) name partitions (partitions >= id + 1); collective-permute pairs
  without one name replicas;
- flattened-id groups name devices (replicas * partitions >= id + 1: replicas grow).
Empty groups (all participants) of an all-gather / reduce-scatter count the participants
its shapes imply (the gathered or scattered dimension's ratio); in cross-replica-and-
partition mode each group spans every partition, so that ratio over the group size counts
the partitions. Iota and mesh groups count
by their expanded ids; a collective whose groups cannot be
expanded leaves the counts alone (running it reports that).
"""

from __future__ import annotations

from tilecc.hlo.interp.collectives import group_mode, source_target_pairs
from tilecc.hlo.ir import HloInstruction, HloModule
from tilecc.hlo.opcodes import COLLECTIVES, HloOpcode as Op

_PERMUTES = frozenset({Op.COLLECTIVE_PERMUTE, Op.COLLECTIVE_PERMUTE_START})


def devices_needed(module: HloModule) -> tuple[int, int]:
    """(replicas, partitions) to run `module` on; see the module contract."""
    replicas, partitions = max(1, module.replica_count), max(1, module.num_partitions)
    flattened = 0  # devices the flattened-id groups name
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode not in COLLECTIVES:
                continue
            highest = _highest_id(inst)
            if highest is None:
                continue
            mode = group_mode(inst)
            if mode == "cross_replica_and_partition":
                partitions = max(partitions, _partitions_by_shape(inst))
            if mode == "cross_partition":
                partitions = max(partitions, highest + 1)
            elif mode == "flattened_id":
                flattened = max(flattened, highest + 1)
            else:
                replicas = max(replicas, highest + 1)
    if flattened > replicas * partitions:
        replicas = -(-flattened // partitions)
    return replicas, partitions


def _highest_id(inst: HloInstruction) -> int | None:
    """The largest id `inst`'s groups or pairs name, None when they name none."""
    if inst.opcode in _PERMUTES:
        pairs = source_target_pairs(inst)
        return max((max(pair) for pair in pairs), default=None)
    if inst.replica_groups is None or inst.replica_groups.kind == "empty":
        return _participants_by_shape(inst)
    try:
        groups = inst.replica_groups.groups()
    except ValueError:
        return None
    return max((max(group) for group in groups or [] if group), default=None)


def _partitions_by_shape(inst: HloInstruction) -> int:
    """The partitions a cross-replica-and-partition all-gather / reduce-scatter spans: its
    shapes' participants over its group size (1 when they do not say)."""
    try:
        groups = inst.replica_groups.groups() if inst.replica_groups is not None else None
    except ValueError:
        return 1
    if not groups or not groups[0]:
        return 1
    implied = _participants_by_shape(inst)
    if implied is None or (implied + 1) % len(groups[0]):
        return 1
    return (implied + 1) // len(groups[0])


def _participants_by_shape(inst: HloInstruction) -> int | None:
    """The highest participant id of an all-gather / reduce-scatter over all participants,
    from its shapes; None for other opcodes or shapes that do not say."""
    if inst.opcode not in (Op.ALL_GATHER, Op.ALL_GATHER_START, Op.REDUCE_SCATTER) \
            or not inst.operands:
        return None
    dim = (inst.dimensions or (0,))[0]
    result = inst.shape
    if inst.opcode is Op.ALL_GATHER_START and result.is_tuple:  # (operand, result)
        result = result.tuple_shapes[-1]
    if result.is_tuple:
        result = result.tuple_shapes[0]
    operand = inst.operands[0].shape
    if not (result.is_array and operand.is_array and dim < min(result.rank, operand.rank)):
        return None
    gathers = inst.opcode in (Op.ALL_GATHER, Op.ALL_GATHER_START)
    big, small = (result, operand) if gathers else (operand, result)
    if small.dims[dim] == 0 or big.dims[dim] % small.dims[dim]:
        return None
    return big.dims[dim] // small.dims[dim] - 1
