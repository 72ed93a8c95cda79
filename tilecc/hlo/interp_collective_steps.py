"""Compiled steps of the collective opcodes; the Interpreter mixes CollectiveSteps in.

Contract: each builder takes a collective instruction and returns its Step (see
interp_values). Replica groups are worked out on the instruction's first run -- after the
check that the lanes are devices, so a collective inside a reducer computation reports
that first -- and kept for the next runs, with the all-reduce gather layout. The
semantics live in interp_collectives (groups, data movement) and interp_reduce
(collective_reduce, tree_reduce).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo import interp_collectives as coll
from tilecc.hlo import interp_elementwise as ew
from tilecc.hlo.interp_reduce import LaneCombiner, collective_reduce, reducer_opcode, tree_reduce
from tilecc.hlo.interp_values import Array, Lanes, Step, Value, single_or_tuple
from tilecc.hlo.ir import HloComputation, HloInstruction
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import Shape


class CollectiveSteps:
    """Builders for collectives and the device-id check they share with replica-id."""

    replicas: int
    partitions: int

    if TYPE_CHECKING:  # provided by the Interpreter
        def _called(self, inst: HloInstruction) -> HloComputation: ...
        def _lane_combiner(self, comp: HloComputation) -> LaneCombiner: ...

    def _device_ids(self, inst: HloInstruction, lanes: Lanes) -> Array:
        if lanes.device_ids is None:
            raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} inside a computation "
                              "applied to scalar elements is not supported by the interpreter")
        return lanes.device_ids

    def _groups(self, inst: HloInstruction) -> Callable[[Lanes], list[list[int]]]:
        """groups(lanes): the device groups of `inst`, worked out on the first run (after
        the check that the lanes are devices, so that error comes first) and kept."""
        found: list[list[list[int]]] = []

        def groups(d: Lanes) -> list[list[int]]:
            self._device_ids(inst, d)
            if not found:
                found.append(coll.device_groups(inst, self.replicas, self.partitions))
            return found[0]
        return groups

    def _group_reducer(self, inst: HloInstruction, t_shape: Shape) -> coll.GroupReducer:
        comp = self._called(inst)
        t = t_shape.element_type
        ew.check_supported_type(t, f"{inst.name} ({inst.opcode.mnemonic})")
        if (opcode := reducer_opcode(comp)) is not None:
            return lambda stack, out: collective_reduce(opcode, t, stack, out)
        combine = self._lane_combiner(comp)

        def reduce_group(stack: Array, out: Array | None) -> Array:
            members = stack.shape[0]
            columns = np.moveaxis(stack, 0, -1).reshape(-1, members)
            reduced = tree_reduce([columns], combine)[0].reshape(stack.shape[1:])
            if out is None:
                return reduced
            out[...] = reduced
            return out
        return reduce_group

    def _all_reduce(self, inst: HloInstruction) -> Step:
        groups = self._groups(inst)
        layouts: dict[int, coll.GroupLayout] = {}  # id(groups) -> their layout
        reducers = [self._group_reducer(inst, op.shape) for op in inst.operands]

        def step(a: list[Value], d: Lanes) -> Value:
            members = groups(d)
            layout = layouts.get(id(members))
            if layout is None:
                layout = layouts[id(members)] = coll.GroupLayout.of(members)
            outs = [coll.all_reduce(x, layout, reduce)  # type: ignore[arg-type]
                    for x, reduce in zip(a, reducers)]
            return single_or_tuple(inst, outs)
        return step

    def _all_gather(self, inst: HloInstruction) -> Step:
        groups = self._groups(inst)
        dim = (inst.dimensions or (0,))[0]
        return lambda a, d: single_or_tuple(
            inst, [coll.all_gather(x, groups(d), dim) for x in a])  # type: ignore[arg-type]

    def _reduce_scatter(self, inst: HloInstruction) -> Step:
        groups = self._groups(inst)
        dim = (inst.dimensions or (0,))[0]
        reducers = [self._group_reducer(inst, op.shape) for op in inst.operands]
        return lambda a, d: single_or_tuple(inst, [
            coll.reduce_scatter(x, groups(d), dim, reduce)  # type: ignore[arg-type]
            for x, reduce in zip(a, reducers)])

    def _all_to_all(self, inst: HloInstruction) -> Step:
        groups = self._groups(inst)
        dims = inst.dimensions

        def step(a: list[Value], d: Lanes) -> Value:
            if dims:
                return single_or_tuple(inst, [
                    coll.all_to_all_array(x, groups(d), dims[0])  # type: ignore[arg-type]
                    for x in a])
            return tuple(coll.all_to_all_tuple(list(a), groups(d)))  # type: ignore[arg-type]
        return step

    def _collective_permute(self, inst: HloInstruction) -> Step:
        def step(a: list[Value], d: Lanes) -> Value:
            self._device_ids(inst, d)
            return coll.collective_permute(a[0], inst, self.replicas,  # type: ignore[arg-type]
                                           self.partitions)
        return step

    def _collective_broadcast(self, inst: HloInstruction) -> Step:
        groups = self._groups(inst)
        return lambda a, d: single_or_tuple(
            inst, [coll.collective_broadcast(x, groups(d)) for x in a])  # type: ignore[arg-type]


C = CollectiveSteps
COLLECTIVE_BUILDERS: dict[Op, Callable[..., Step]] = {
    Op.ALL_REDUCE: C._all_reduce, Op.ALL_GATHER: C._all_gather,
    Op.REDUCE_SCATTER: C._reduce_scatter, Op.ALL_TO_ALL: C._all_to_all,
    Op.COLLECTIVE_PERMUTE: C._collective_permute,
    Op.COLLECTIVE_BROADCAST: C._collective_broadcast,
}
"""Collective opcode -> builder(interpreter, instruction) returning the step."""
del C
