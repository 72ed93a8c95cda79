"""SPMD HLO on MPI: the interpreter's devices spread over the processes of an MPI
communicator, each process holding only its own devices' arrays.

Contract: `evaluate_module_mpi(module, local_inputs, replicas, partitions, comm)` is
`evaluate_module` for the devices `local_devices(devices, size, rank)` (contiguous blocks,
np.array_split's): inputs and outputs carry those devices on axis 0, in device order.
Results are bit-identical to the single-process run, because everything but the
collectives is lane-independent and the collectives run the single-process code itself:
- the device groups are XLA's (interp.collectives.device_groups), known to every process;
- a process gathers, by one MPI all-to-all exchange, the rows of every device in a group
  that holds one of its devices ("gather what a group needs"), renumbers those devices
  0..K-1 in group order, and runs interp.collectives' all_reduce / all_gather /
  reduce_scatter / all_to_all / collective_broadcast with the same group reducer on that
  compact array, so each group is reduced locally in XLA CPU's member order; then it keeps
  its own devices' rows;
- collective-permute resolves each target's source with the single-process function run
  on device numbers, then fetches exactly the sources its own targets need.
The interpreter itself is unchanged: MpiInterpreter only compiles the collective opcodes
into these exchanging steps (errors are deferred to run time as for any instruction).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp import collectives as coll
from tilecc.hlo.interp.values import Array, Lanes, Step, Value, check_input, leaves, single_or_tuple
from tilecc.hlo.interp.collective_steps import device_ids, group_reducer
from tilecc.hlo.interpreter import Interpreter, _deferred
from tilecc.hlo.ir import HloInstruction, HloModule
from tilecc.hlo.opcodes import HloOpcode as Op

GROUPED = frozenset({Op.ALL_REDUCE, Op.ALL_GATHER, Op.REDUCE_SCATTER, Op.ALL_TO_ALL, Op.COLLECTIVE_BROADCAST})


def local_devices(devices: int, size: int, rank: int) -> np.ndarray:
    """The device ids process `rank` of `size` holds (contiguous, sizes differ by <= 1)."""
    return np.array_split(np.arange(devices), size)[rank]


class DeviceExchange:
    """Moves device rows between the processes: `fetch(x, needed)` gives the rows of the
    global device ids `needed` (any process's) stacked in that order, from every process's
    local array `x` (its own devices' rows)."""

    def __init__(self, comm: Any, devices: int) -> None:
        self.comm = comm
        self.size, self.rank = comm.Get_size(), comm.Get_rank()
        self.owner = np.concatenate([np.full(len(local_devices(devices, self.size, p)), p)
                                     for p in range(self.size)])
        self.mine = local_devices(devices, self.size, self.rank)

    def fetch(self, x: Array, needed_by: Sequence[Sequence[int]]) -> Array:
        """`needed_by[p]`: the devices process p needs. Returns this process's rows."""
        start = int(self.mine[0]) if len(self.mine) else 0
        payload = [np.ascontiguousarray(x[[d - start for d in need if self.owner[d] == self.rank]])
                   for need in needed_by]
        received = self.comm.alltoall(payload)
        mine = needed_by[self.rank]
        out = np.empty((len(mine),) + x.shape[1:], x.dtype)
        cursor = [0] * self.size
        for k, device in enumerate(mine):
            source = int(self.owner[device])
            out[k] = received[source][cursor[source]]
            cursor[source] += 1
        return out


class MpiInterpreter(Interpreter):
    """The interpreter with collectives that exchange device rows through MPI."""

    def __init__(self, module: HloModule, replicas: int, partitions: int, comm: Any,
                 max_steps: int | None = None) -> None:
        super().__init__(module, replicas, partitions, max_steps)
        self.exchange = DeviceExchange(comm, replicas * partitions)

    def compile_instruction(self, inst: HloInstruction) -> Step:
        if inst.opcode not in GROUPED and inst.opcode is not Op.COLLECTIVE_PERMUTE:
            return super().compile_instruction(inst)
        try:
            return self._permute(inst) if inst.opcode is Op.COLLECTIVE_PERMUTE else self._grouped(inst)
        except Exception as error:  # noqa: BLE001 - raised when the instruction runs, as elsewhere
            return _deferred(error)

    def _grouped(self, inst: HloInstruction) -> Step:
        reducers = ([group_reducer(self, inst, op.shape) for op in inst.operands]
                    if inst.opcode in (Op.ALL_REDUCE, Op.REDUCE_SCATTER) else [])
        plan: list[tuple[list[list[int]], list[list[int]], np.ndarray]] = []

        def prepare() -> tuple[list[list[int]], list[list[int]], np.ndarray]:
            """(compact groups, the devices each process needs, rows of own devices)."""
            if not plan:
                groups = coll.device_groups(inst, self.replicas, self.partitions)
                needed_by = []
                for p in range(self.exchange.size):
                    own = set(local_devices(self.replicas * self.partitions, self.exchange.size, p).tolist())
                    needed_by.append([d for g in groups if own & set(g) for d in g])
                mine = needed_by[self.exchange.rank]
                position = {d: k for k, d in enumerate(mine)}
                compact = [[position[d] for d in g] for g in groups if g[0] in position]
                rows = np.array([position[int(d)] for d in self.exchange.mine], dtype=np.int64)
                plan.append((compact, needed_by, rows))
            return plan[0]

        def step(a: list[Value], d: Lanes) -> Value:
            device_ids(inst, d)
            compact, needed_by, rows = prepare()
            full = [self.exchange.fetch(x, needed_by) for x in a]  # type: ignore[arg-type]
            outs = self._run_grouped(inst, full, compact, reducers)
            return single_or_tuple(inst, [np.ascontiguousarray(o[rows]) for o in outs])
        return step

    def _run_grouped(self, inst: HloInstruction, xs: list[Array], groups: list[list[int]],
                     reducers: list[coll.GroupReducer]) -> list[Array]:
        dim = (inst.dimensions or (0,))[0]
        if inst.opcode is Op.ALL_REDUCE:
            layout = coll.GroupLayout.of(groups)
            return [coll.all_reduce(x, layout, reduce) for x, reduce in zip(xs, reducers)]
        if inst.opcode is Op.ALL_GATHER:
            return [coll.all_gather(x, groups, dim) for x in xs]
        if inst.opcode is Op.REDUCE_SCATTER:
            return [coll.reduce_scatter(x, groups, dim, reduce) for x, reduce in zip(xs, reducers)]
        if inst.opcode is Op.COLLECTIVE_BROADCAST:
            return [coll.collective_broadcast(x, groups) for x in xs]
        if inst.dimensions:
            return [coll.all_to_all_array(x, groups, inst.dimensions[0]) for x in xs]
        return coll.all_to_all_tuple(xs, groups)

    def _permute(self, inst: HloInstruction) -> Step:
        devices = self.replicas * self.partitions
        found: list[tuple[list[list[int]], np.ndarray]] = []

        def prepare() -> tuple[list[list[int]], np.ndarray]:
            if not found:
                # the single-process semantics on device numbers + 1 (0: no source)
                numbers = np.arange(1, devices + 1, dtype=np.int64)
                source = coll.collective_permute(numbers, inst, self.replicas, self.partitions) - 1
                needed_by = [[int(source[t]) for t in local_devices(devices, self.exchange.size, p)
                              if source[t] >= 0] for p in range(self.exchange.size)]
                found.append((needed_by, source[self.exchange.mine]))
            return found[0]

        def step(a: list[Value], d: Lanes) -> Value:
            device_ids(inst, d)
            needed_by, sources = prepare()
            x: Array = a[0]  # type: ignore[assignment]
            fetched = self.exchange.fetch(x, needed_by)
            out = np.zeros_like(x)
            out[sources >= 0] = fetched
            return out
        return step


def evaluate_module_mpi(module: HloModule, local_inputs: list[np.ndarray], replicas: int,
                        partitions: int, comm: Any,
                        max_steps: int | None = None) -> list[np.ndarray]:
    """Run the entry on this process's devices; see the module contract."""
    if replicas < 1 or partitions < 1:
        raise InterpError(f"need at least one replica and partition, got replicas={replicas} "
                          f"partitions={partitions}")
    entry = module.entry
    if entry is None:
        raise InterpError(f"module {module.name} has no entry computation")
    devices = replicas * partitions
    if comm.Get_size() > devices:
        raise InterpError(f"{comm.Get_size()} processes for {devices} devices: every process needs a device")
    mine = local_devices(devices, comm.Get_size(), comm.Get_rank())
    interpreter = MpiInterpreter(module, replicas, partitions, comm, max_steps)
    if len(local_inputs) != len(entry.parameters):
        raise InterpError(f"entry computation {entry.name} takes {len(entry.parameters)} "
                          f"parameters, got {len(local_inputs)} inputs")
    args = [check_input(p, x, len(mine)) for p, x in zip(entry.parameters, local_inputs)]
    with np.errstate(all="ignore"):
        result = interpreter.run(entry, args, Lanes(len(mine), mine))
    return leaves(result)

