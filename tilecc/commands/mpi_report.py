"""One report for a command that every MPI process runs on the same input.

Contract: `report_once(comm, work)` runs `work()` on this process and then meets every
other process in one allgather, so no process is left waiting for one that failed.
- no process raised: returns work()'s value (never None);
- some process raised a TileccError: rank 0 raises its own (a ParseError keeps its
  rendering), else the lowest failing rank's message as a TileccError, which the CLI
  prints as its one line; every other process returns None (the command exits 1, silent).
Errors other than TileccError are bugs and propagate (mpiexec then stops every process).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from tilecc.errors import TileccError

T = TypeVar("T")


def report_once(comm: Any, work: Callable[[], T]) -> T | None:
    """work()'s value, or the one report of a failure; see the module contract."""
    error: TileccError | None = None
    value: T | None = None
    try:
        value = work()
    except TileccError as err:
        error = err
    failures = comm.allgather(None if error is None else str(error))
    if not any(failures):
        return value
    if comm.Get_rank() == 0:   # the input is the same everywhere: rank 0's own error, else the first
        raise error if error is not None else TileccError(next(f for f in failures if f))
    return None
