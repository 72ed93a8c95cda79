"""Run a host program with one MPI process per rank (the MPI twin of interpreter.run_host).

Contract: every process of the communicator calls `run_host_mpi` with the same module and
arguments (under `mpiexec -n N`); each runs the host function on its own rank against an
MpiWorld and gets back a RankOutcome with its own result and, identical on every rank,
the error to report (interpreter.first_failure over all ranks) or None.
- Host tensors (numpy arguments) are host memory that the threaded backend shares between
  ranks; here every process has a copy, and a rank writes into its copy what its
  dispatches (`device=r`) produce. After the run the copies are merged on every rank:
  an element takes the value of the lowest rank whose copy changed it (bitwise), so the
  merged host memory equals the threaded run's whenever ranks write disjoint elements,
  which dispatch-per-device programs do.
- A failing rank posts its failure to every rank (MpiWorld.fail) unless it was itself only
  aborted by another's; the ranks then meet in plain MPI collectives, which all of them
  reach because every error is caught, so nothing hangs past the wait timeout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilecc.errors import InterpError, TileccError
from tilecc.host import ir
from tilecc.host.runtime.failures import as_tilecc_error, first_failure, is_abort
from tilecc.host.runtime.interpreter import RankInterpreter
from tilecc.host.runtime.module_values import module_constants
from tilecc.host.runtime.mpi_world import MpiWorld


@dataclass
class RankOutcome:
    rank: int
    world: MpiWorld
    result: Any
    error: TileccError | None


def _bits(array: np.ndarray) -> np.ndarray:
    return array.view(np.uint8).reshape(array.shape + (array.dtype.itemsize,)) if array.ndim else \
        array.reshape(1).view(np.uint8)


def merge_host_copies(initial: np.ndarray, copies: Sequence[np.ndarray]) -> np.ndarray:
    """Element-wise: the first copy (in rank order) that differs bitwise from `initial`."""
    merged = initial.copy()
    decided = np.zeros(initial.shape, bool)
    before = _bits(initial)
    for copy in copies:
        changed = (_bits(copy) != before).reshape(initial.shape + (-1,)).any(axis=-1) & ~decided
        merged[changed] = copy[changed]
        decided |= changed
    return merged


def run_host_mpi(module: ir.Module, program: str, function: str, args: Sequence[Any] = (),
                 timeout: float = 20.0, reference_collectives: bool = False,
                 values: Mapping[str, Any] | None = None, world: MpiWorld | None = None,
                 path: str = "<program>") -> RankOutcome:
    world = world if world is not None else MpiWorld(timeout)
    prog = module.program(program)
    func = prog.function(function)
    constants = {**module_constants(module), **(values or {})}
    initial = [a.copy() if isinstance(a, np.ndarray) else None for a in args]
    rank = world.rank
    result: Any = None
    error: BaseException | None = None
    try:
        interpreter = RankInterpreter(prog, world, rank, constants, reference_collectives, path)
        result = interpreter.call(func, interpreter.bind_arguments(func, list(args), {}))
    except BaseException as err:  # noqa: BLE001 - reported on every rank below
        error = err
        if not is_abort(rank, err):
            world.fail(f"rank {rank} failed: {err}")
    reported = world.comm.allgather(None if error is None else (str(as_tilecc_error(rank, error)),
                                                                 is_abort(rank, error)))
    errors: list[BaseException | None] = [
        None if entry is None else InterpError(entry[0]) for entry in reported]
    if error is not None:
        errors[rank] = error   # the rank's own error keeps its type (ParseError, ...)
    failure = first_failure(errors)
    if failure is None:
        for arg, before in zip(args, initial):
            if isinstance(arg, np.ndarray) and before is not None:
                arg[...] = merge_host_copies(before, world.comm.allgather(arg))
    return RankOutcome(rank, world, result, failure)
