"""Collectives for the vectorized interpreter: every device's value lives in one array.

Contract: a value is an array whose axis 0 is the device axis, device
d = replica * partitions + partition (XLA's flattened id and the oracle's order). Each
function takes those arrays and returns new arrays of the same layout.

Participants follow XLA's GetParticipatingDevicesGroups (xla/service/collective_ops_utils.cc).
The group mode comes from (channel_id present, use_global_device_ids):
- (no, false) cross-replica: ids are replicas, one group per (group, partition);
- (yes, false) cross-replica-and-partition: ids are replicas, a group holds those replicas
  on every partition (replica-major order);
- (yes, true) flattened ids: ids are device ids;
- (yes, no attribute: all-to-all, collective-permute, collective-broadcast) cross-partition:
  ids are partitions, one group per (group, replica).
Empty replica groups mean all replicas (all partitions in cross-partition mode). Groups
must cover every device exactly once, or InterpError (XLA's compiler rejects such text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode

Array = np.ndarray
GroupReducer = Callable[[Array, "Array | None"], Array]
"""reduce(stack, out): reduces a (S, *dims) stack of the S members' values over axis 0,
into `out` (returned) when it is not None."""

_HAS_GLOBAL_IDS_ATTRIBUTE = frozenset({HloOpcode.ALL_REDUCE, HloOpcode.ALL_GATHER,
                                       HloOpcode.REDUCE_SCATTER, HloOpcode.ALL_REDUCE_START,
                                       HloOpcode.ALL_GATHER_START})
_PAIR = re.compile(r"\{\s*(-?\d+)\s*,\s*(-?\d+)\s*\}")
ALL_REDUCE_BLOCK_BYTES = 1 << 18
"""all_reduce's block of one member's value: the members' blocks and their result stay in
a core's L2 cache (1-2 MiB) between the reduction and the copies to the other members."""


def group_mode(inst: HloInstruction) -> str:
    """'cross_replica', 'cross_partition', 'cross_replica_and_partition' or 'flattened_id'."""
    has_channel = inst.channel_id is not None
    if inst.opcode not in _HAS_GLOBAL_IDS_ATTRIBUTE:
        return "cross_partition" if has_channel else "cross_replica"
    if not has_channel:
        if inst.use_global_device_ids:
            raise InterpError(f"{inst.name}: use_global_device_ids=true needs a channel_id")
        return "cross_replica"
    return "flattened_id" if inst.use_global_device_ids else "cross_replica_and_partition"


def device_groups(inst: HloInstruction, replicas: int, partitions: int) -> list[list[int]]:
    """The device ids of each participating group of `inst`, in XLA's member order."""
    mode = group_mode(inst)
    groups = inst.replica_groups.groups() if inst.replica_groups is not None else None
    if not groups:
        if mode == "flattened_id":
            raise InterpError(f"{inst.name}: replica groups cannot be empty with "
                              "use_global_device_ids=true")
        groups = [list(range(partitions if mode == "cross_partition" else replicas))]
    id_limit = {"cross_replica": replicas, "cross_replica_and_partition": replicas,
                "cross_partition": partitions, "flattened_id": replicas * partitions}[mode]
    for group in groups:
        for member in group:
            if not 0 <= member < id_limit:
                raise InterpError(f"{inst.name}: id {member} in replica groups is out of "
                                  f"range for {mode.replace('_', '-')} mode with "
                                  f"{replicas} replicas and {partitions} partitions")
    if mode == "cross_replica":
        devices = [[r * partitions + p for r in g] for g in groups for p in range(partitions)]
    elif mode == "cross_partition":
        devices = [[r * partitions + p for p in g] for g in groups for r in range(replicas)]
    elif mode == "cross_replica_and_partition":
        devices = [[r * partitions + p for r in g for p in range(partitions)] for g in groups]
    else:
        devices = [list(g) for g in groups]
    covered = sorted(d for g in devices for d in g)
    if covered != list(range(replicas * partitions)):
        raise InterpError(f"{inst.name}: replica groups {inst.replica_groups} must cover each "
                          f"of the {replicas * partitions} devices exactly once "
                          f"({mode.replace('_', '-')} mode, {replicas} replicas, "
                          f"{partitions} partitions)")
    return devices


@dataclass(frozen=True, slots=True)
class GroupLayout:
    """Device groups with what all_reduce needs worked out once: `index` is the (G, S)
    member table when every group has S members (else None), `in_order` says it is
    0, 1, ..., D-1 row by row (groups of consecutive devices: a reshape, no gather)."""

    groups: list[list[int]]
    index: Array | None
    in_order: bool

    @staticmethod
    def of(groups: list[list[int]]) -> GroupLayout:
        if len({len(g) for g in groups}) != 1:
            return GroupLayout(groups, None, False)
        index = np.array(groups)
        return GroupLayout(groups, index,
                           bool((index.reshape(-1) == np.arange(index.size)).all()))


def all_reduce(x: Array, layout: GroupLayout, reduce_group: GroupReducer,
               empty: Callable[[tuple[int, ...], np.dtype], Array] = np.empty) -> Array:
    """Every member gets the reduction of its group; the result array (unless one read-only
    broadcast serves every device) comes from `empty(shape, dtype)`."""
    index = layout.index
    if index is None:
        out = empty(x.shape, x.dtype)
        for group in layout.groups:
            out[group] = reduce_group(x[group], None)
        return out
    # Equal groups reduce in one call; groups of consecutive devices need no gather copy,
    # and one group covering every device returns a read-only broadcast (no copy at all).
    stacked_shape = index.shape + x.shape[1:]
    in_order = layout.in_order
    stacked = np.moveaxis(x.reshape(stacked_shape) if in_order else x[index], 1, 0)
    if in_order and len(index) == 1:
        return np.broadcast_to(reduce_group(stacked, None)[0], x.shape)
    out = empty(x.shape, x.dtype)
    if not in_order:
        out[index] = reduce_group(stacked, None)[:, None]
        return out
    # Member 0's rows take the reduction directly, the other members copy them: no
    # temporary the size of the groups' results. Over large values that goes block by
    # block, so the copies read the reduction while it is in cache (a reduction reads
    # and combines element by element: blocks of elements give the same result).
    groups, size = index.shape
    elements = x[0].size
    if elements >= 2 * ALL_REDUCE_BLOCK_BYTES // x.itemsize and x.flags.c_contiguous:
        block = ALL_REDUCE_BLOCK_BYTES // x.itemsize
        flat, out_flat = x.reshape(groups, size, elements), out.reshape(groups, size, elements)
        for g in range(groups):
            for start in range(0, elements, block):
                part = slice(start, start + block)
                head = out_flat[g, 0, part]
                reduce_group(flat[g, :, part], head)
                out_flat[g, 1:, part] = head
        return out
    members = out.reshape(stacked_shape)
    reduce_group(stacked, members[:, 0])
    for k in range(1, size):
        members[:, k] = members[:, 0]
    return out


def all_gather(x: Array, groups: list[list[int]], dim: int) -> Array:
    """Concatenate the members' values along `dim` (an operand dim, not counting axis 0)."""
    size = len(groups[0])
    out = np.empty((x.shape[0],) + _scaled(x.shape[1:], dim, size), x.dtype)
    for group in groups:
        out[group] = np.concatenate(list(x[group]), axis=dim)
    return out


def reduce_scatter(x: Array, groups: list[list[int]], dim: int,
                   reduce_group: GroupReducer) -> Array:
    """Reduce over the group, then member k keeps chunk k of `dim`."""
    size = len(groups[0])
    _scaled(x.shape[1:], dim, 1)  # range check
    if x.shape[1 + dim] % size:
        raise InterpError(f"reduce-scatter: dimension {dim} of size {x.shape[1 + dim]} does "
                          f"not split into {size} equal chunks")
    chunk = x.shape[1 + dim] // size
    out = np.empty((x.shape[0],) + _scaled(x.shape[1:], dim, 0, chunk), x.dtype)
    for group in groups:
        reduced = reduce_group(x[group], None)
        for k, device in enumerate(group):
            out[device] = np.take(reduced, range(k * chunk, (k + 1) * chunk), axis=dim)
    return out


def all_to_all_array(x: Array, groups: list[list[int]], dim: int) -> Array:
    """Member k's chunk j of `dim` becomes member j's chunk k."""
    size = len(groups[0])
    _scaled(x.shape[1:], dim, 1)  # range check
    if x.shape[1 + dim] % size:
        raise InterpError(f"all-to-all: dimension {dim} of size {x.shape[1 + dim]} does not "
                          f"split into {size} equal chunks")
    out = np.empty_like(x)
    for group in groups:
        stacked = x[group]  # (S, ..., dim, ...)
        split = stacked.reshape(stacked.shape[:1 + dim] + (size, -1) + stacked.shape[2 + dim:])
        swapped = np.swapaxes(split, 0, 1 + dim)  # member axis <-> chunk axis
        out[group] = swapped.reshape(stacked.shape)
    return out


def all_to_all_tuple(xs: list[Array], groups: list[list[int]]) -> list[Array]:
    """Tuple form: member k's operand j becomes member j's result k."""
    size = len(groups[0])
    if len(xs) != size:
        raise InterpError(f"all-to-all: {len(xs)} operands for groups of size {size}")
    outs = [np.empty_like(x) for x in xs]
    for group in groups:
        for k, device in enumerate(group):
            for j, target in enumerate(group):
                outs[k][target] = xs[j][device]
    return outs


def source_target_pairs(inst: HloInstruction) -> list[tuple[int, int]]:
    text = inst.attributes.get("source_target_pairs", "{}")
    return [(int(s), int(t)) for s, t in _PAIR.findall(text)]


def collective_permute(x: Array, inst: HloInstruction, replicas: int,
                       partitions: int) -> Array:
    """Each target receives its source's value; devices that are no target get zeros.

    Over one partition a cross-partition permute's ids are checked against the replica
    count (XLA's verifier) and a pair whose target is no partition delivers nothing, one
    whose source is none is refused (XLA CPU aborts); measured on jaxlib 0.10.2."""
    cross_partition = group_mode(inst) == "cross_partition"
    limit = partitions if cross_partition and partitions > 1 else replicas
    out = np.zeros_like(x)
    targets: set[int] = set()
    for source, target in source_target_pairs(inst):
        if not (0 <= source < limit and 0 <= target < limit) or target in targets:
            raise InterpError(f"{inst.name}: bad source_target_pairs entry "
                              f"{{{source},{target}}} (ids below {limit}, each target once)")
        targets.add(target)
        if cross_partition and target >= partitions:
            continue
        if cross_partition and source >= partitions:
            raise InterpError(f"{inst.name}: source_target_pairs entry {{{source},{target}}} "
                              f"sends from partition {source} of {partitions}")
        for other in range(replicas if cross_partition else partitions):
            if cross_partition:
                out[other * partitions + target] = x[other * partitions + source]
            else:
                out[target * partitions + other] = x[source * partitions + other]
    return out


def collective_broadcast(x: Array, groups: list[list[int]]) -> Array:
    """Every member receives the value of its group's first member."""
    out = np.empty_like(x)
    for group in groups:
        out[group] = x[group[0]]
    return out


def _scaled(dims: tuple[int, ...], dim: int, factor: int, value: int | None = None
            ) -> tuple[int, ...]:
    if not 0 <= dim < len(dims):
        raise InterpError(f"collective dimension {dim} is out of range for rank {len(dims)}")
    new = list(dims)
    new[dim] = value if value is not None else dims[dim] * factor
    return tuple(new)
