"""Builders of the collective opcodes and of replica-id / partition-id.

Contract: each builder is a `Builder` (see values). Replica groups are worked out on the
instruction's first run -- after the check that the lanes are devices, so a collective
inside a reducer computation reports that first -- and kept for the next runs, with the
all-reduce gather layout. The semantics live in collectives.py (groups, data movement) and
reduce.py (collective_reduce, tree_reduce).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp import collectives as coll
from tilecc.hlo.interp import elementwise as ew
from tilecc.hlo.interp.reduce import collective_reduce, reducer_opcode, tree_reduce
from tilecc.hlo.interp.values import (Array, Lanes, Operands, Recycler, Runner, Step, Value,
                                      called_computation, lane_combiner, single_or_tuple)
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.types import Shape


def device_ids(inst: HloInstruction, lanes: Lanes) -> Array:
    """The device of each lane; InterpError when the lanes are a reducer's scalars."""
    if lanes.device_ids is None:
        raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} inside a computation "
                          "applied to scalar elements is not supported by the interpreter")
    return lanes.device_ids


def replica_id_step(runner: Runner, inst: HloInstruction) -> Step:
    partitions = runner.partitions
    return lambda a, d: (device_ids(inst, d) // partitions).astype(np.uint32)


def partition_id_step(runner: Runner, inst: HloInstruction) -> Step:
    partitions = runner.partitions
    return lambda a, d: (device_ids(inst, d) % partitions).astype(np.uint32)


def _groups(runner: Runner, inst: HloInstruction) -> Callable[[Lanes], list[list[int]]]:
    """groups(lanes): the device groups of `inst`, worked out on the first run (after the
    check that the lanes are devices, so that error comes first) and kept."""
    found: list[list[list[int]]] = []

    def groups(d: Lanes) -> list[list[int]]:
        device_ids(inst, d)
        if not found:
            found.append(coll.device_groups(inst, runner.replicas, runner.partitions))
        return found[0]
    return groups


def group_reducer(runner: Runner, inst: HloInstruction, t_shape: Shape) -> coll.GroupReducer:
    comp = called_computation(inst)
    t = t_shape.element_type
    ew.check_supported_type(t, f"{inst.name} ({inst.opcode.mnemonic})")
    if (opcode := reducer_opcode(comp)) is not None:
        return lambda stack, out: collective_reduce(opcode, t, stack, out)
    combine = lane_combiner(runner, comp)

    def reduce_group(stack: Array, out: Array | None) -> Array:
        members = stack.shape[0]
        columns = np.moveaxis(stack, 0, -1).reshape(-1, members)
        reduced = tree_reduce([columns], combine)[0].reshape(stack.shape[1:])
        if out is None:
            return reduced
        out[...] = reduced
        return out
    return reduce_group


def all_reduce_step(runner: Runner, inst: HloInstruction) -> Step:
    groups = _groups(runner, inst)
    layouts: dict[int, coll.GroupLayout] = {}  # id(groups) -> their layout
    reducers = [group_reducer(runner, inst, op.shape) for op in inst.operands]
    # a result buffer of the previous run that is dead by now is written again: a large
    # fresh array costs its page faults (a third of a pairs all-reduce of 32 MB)
    recyclers = [Recycler() for _ in inst.operands]

    def step(a: Operands, d: Lanes) -> Value:
        members = groups(d)
        layout = layouts.get(id(members))
        if layout is None:
            layout = layouts[id(members)] = coll.GroupLayout.of(members)
        outs = [coll.all_reduce(x, layout, reduce, recycler.take)
                for x, reduce, recycler in zip(a, reducers, recyclers)]
        return single_or_tuple(inst, outs)
    return step


def all_gather_step(runner: Runner, inst: HloInstruction) -> Step:
    groups = _groups(runner, inst)
    dim = (inst.dimensions or (0,))[0]
    return lambda a, d: single_or_tuple(inst, [coll.all_gather(x, groups(d), dim) for x in a])


def reduce_scatter_step(runner: Runner, inst: HloInstruction) -> Step:
    groups = _groups(runner, inst)
    dim = (inst.dimensions or (0,))[0]
    reducers = [group_reducer(runner, inst, op.shape) for op in inst.operands]
    return lambda a, d: single_or_tuple(inst, [
        coll.reduce_scatter(x, groups(d), dim, reduce) for x, reduce in zip(a, reducers)])


def all_to_all_step(runner: Runner, inst: HloInstruction) -> Step:
    groups = _groups(runner, inst)
    dims = inst.dimensions

    def step(a: Operands, d: Lanes) -> Value:
        if dims:
            return single_or_tuple(inst, [coll.all_to_all_array(x, groups(d), dims[0])
                                          for x in a])
        return tuple(coll.all_to_all_tuple(list(a), groups(d)))
    return step


def collective_permute_step(runner: Runner, inst: HloInstruction) -> Step:
    def step(a: Operands, d: Lanes) -> Value:
        device_ids(inst, d)
        return coll.collective_permute(a[0], inst, runner.replicas, runner.partitions)
    return step


def collective_broadcast_step(runner: Runner, inst: HloInstruction) -> Step:
    groups = _groups(runner, inst)
    return lambda a, d: single_or_tuple(inst, [coll.collective_broadcast(x, groups(d))
                                               for x in a])
