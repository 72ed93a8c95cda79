"""Before / after equivalence (equivalence.py) with the devices spread over MPI processes,
for modules whose arrays on every device do not fit one process.

Contract: `check_equivalence_mpi(before, after, replicas, seed, given, out, comm)` is
`check_equivalence(..., oracle="interpreter", ...)` run by every process of `comm` at once:
each process draws the same seeded inputs (random_inputs.entry_inputs, the single-process
draw, keeping only its devices' rows), runs both modules with interp_mpi on its block of
devices, and compares its rows; the per-output verdicts are combined in device order, so
the first mismatch named is the single-process one (same device, index and values) and
every process returns the same bool. Every process writes the same lines to `out` (the
caller lets one of them through). The elements bound (run_limits) applies to a process's
share of the devices; the draw of one parameter still spans every device.
"""

from __future__ import annotations

from typing import Any, TextIO

import numpy as np

from tilecc.hlo.equivalence import compare_outputs, report_outputs
from tilecc.hlo.interp_mpi import evaluate_module_mpi, local_devices
from tilecc.hlo.ir import HloModule
from tilecc.hlo.random_inputs import entry_inputs
from tilecc.hlo.run_limits import check_run_sizes


def check_equivalence_mpi(before: HloModule, after: HloModule, replicas: int, seed: int,
                          given: dict[int, np.ndarray], out: TextIO, comm: Any) -> bool:
    """Run both modules over the processes of `comm`; see the module contract."""
    partitions = before.num_partitions
    devices = replicas * partitions
    mine = local_devices(devices, comm.Get_size(), comm.Get_rank())
    check_run_sizes(before, max(len(mine), 1))
    inputs = entry_inputs(before, devices, np.random.default_rng(seed), given, rows=mine)
    outs_before = evaluate_module_mpi(before, inputs, replicas, partitions, comm)
    outs_after = evaluate_module_mpi(after, inputs, replicas, partitions, comm)
    print(f"verify on interpreter: {replicas} replica(s) x {partitions} partition(s), seed {seed}",
          file=out)
    return report_outputs(outs_before, outs_after, lambda x, y: _first_mismatch(
        comm, _local_verdict(x, y, int(mine[0]), devices)), out)


def _local_verdict(x: np.ndarray, y: np.ndarray, first_device: int, devices: int) -> str:
    if x.dtype != y.dtype or x.shape[1:] != y.shape[1:]:
        # the same on every process; named with the whole device axis, as one process would
        return compare_outputs(np.broadcast_to(x[:1], (devices,) + x.shape[1:]),
                               np.broadcast_to(y[:1], (devices,) + y.shape[1:]))
    return compare_outputs(x, y, first_device)


def _first_mismatch(comm: Any, verdict: str) -> str:
    """The lowest process's mismatch (its devices come first), else 'equal'."""
    return next((v for v in comm.allgather(verdict) if v != "equal"), "equal")
