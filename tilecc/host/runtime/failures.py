"""Which failure a multi-rank run reports, the same on every backend.

Contract: a rank that stops because another rank failed raises "rank r: aborted, ..."
(`is_abort`); `first_failure` picks the lowest rank's own failure, else the lowest
rank's abort, as a TileccError (`as_tilecc_error` wraps anything else with the rank and
exception type), so the threaded and MPI runs print the same one line.
"""

from __future__ import annotations

from collections.abc import Sequence

from tilecc.errors import InterpError, TileccError


def is_abort(rank: int, err: BaseException) -> bool:
    """True for a rank that stopped because another rank failed (not a cause)."""
    return str(err).startswith(f"rank {rank}: aborted")


def as_tilecc_error(rank: int, err: BaseException) -> TileccError:
    if isinstance(err, TileccError):
        return err
    wrapped = InterpError(f"rank {rank}: {type(err).__name__}: {err}")
    wrapped.__cause__ = err
    return wrapped


def first_failure(errors: Sequence[BaseException | None]) -> TileccError | None:
    """The error to report for a run: the lowest rank's own failure, else the lowest
    rank's abort (every backend reports the same one)."""
    causes = [(r, e) for r, e in enumerate(errors) if e is not None and not is_abort(r, e)]
    aborts = [(r, e) for r, e in enumerate(errors) if e is not None]
    chosen = causes[0] if causes else (aborts[0] if aborts else None)
    return as_tilecc_error(*chosen) if chosen is not None else None
