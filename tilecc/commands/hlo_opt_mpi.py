"""`mpiexec -n R tilecc hlo-opt ... --verify[=N]`: hlo-opt on every process, the --verify
execution spread over the R processes (tilecc/hlo/equivalence_mpi.py), for modules whose
arrays on all N devices do not fit one process.

Contract: every process reads the input and runs the passes (they are deterministic, so
each holds the same modules); --verify runs both modules with each process holding only
its block of devices, and prints the single-process verdict lines (first mismatch by
device order). Rank 0 alone prints and writes (-o, --dump-dir); the others run silently.
Exit codes are hlo-opt's, the same on every process; an error is one line from rank 0
(mpi_report.report_once). `--oracle=xla` runs XLA in one process and is refused here.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from typing import TextIO

import numpy as np

from tilecc.commands.mpi_report import report_once
from tilecc.errors import PassError
from tilecc.hlo.equivalence_mpi import check_equivalence_mpi
from tilecc.hlo.ir import HloModule
from tilecc.host.runtime.mpi_world import mpi


def run(args: argparse.Namespace, run_passes: Callable[[argparse.Namespace], int]) -> int:
    comm = mpi().COMM_WORLD

    def command(this: argparse.Namespace) -> int:
        if this.oracle == "xla":
            raise PassError("--oracle=xla runs XLA in one process; run hlo-opt without mpiexec "
                            "(under mpiexec, --verify runs the interpreter over the processes)")
        return run_passes(this)

    if comm.Get_rank() == 0:
        code = report_once(comm, lambda: command(args))
        return 1 if code is None else code
    silent = argparse.Namespace(**{**vars(args), "output": "-", "dump_dir": None,
                                   "dump_format": frozenset({"text"})})
    with open(os.devnull, "w") as sink, redirect_stdout(sink), redirect_stderr(sink):
        code = report_once(comm, lambda: command(silent))
    return 1 if code is None else code


def runs_on(oracle: str) -> str:
    """What executes the modules, for hlo-opt's progress line."""
    return f"{oracle} over {mpi().COMM_WORLD.Get_size()} MPI processes"


def check_equivalence(before: HloModule, after: HloModule, replicas: int, seed: int, oracle: str,
                      given: dict[int, np.ndarray], out: TextIO) -> bool:
    """equivalence.check_equivalence's signature, run over COMM_WORLD's processes."""
    assert oracle == "interpreter", oracle   # run() refuses xla before any pass runs
    return check_equivalence_mpi(before, after, replicas, seed, given, out, mpi().COMM_WORLD)
