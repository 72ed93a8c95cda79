"""Launching tilecc under MPI from Python (tests, benchmarks): where `mpiexec` is and the
environment it needs.

Contract: `under_mpiexec()` tells a process started by mpiexec (MPICH's Hydra, Open MPI or
PMIx set their variables) from a plain one. `mpiexec_path()` is the `mpiexec` installed beside the running interpreter (the
MPICH / Open MPI wheels of the test extra put it there), else the one on PATH, else None.
`mpi_environment()` is os.environ without the variables of an enclosing MPI launch (so a
threaded run started from an MPI process stays threaded), plus what the implementations
need to run as root in containers (Open MPI refuses root without its two ALLOW variables;
MPICH needs nothing) and one process per core without binding (oversubscription is the
normal case on a small CI machine). `run_mpi(n, argv, timeout)` runs `mpiexec -n n argv`
and returns the CompletedProcess; the timeout (seconds) bounds it, so a bug cannot hang.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

LAUNCH_VARIABLES = ("PMI_RANK", "PMI_SIZE", "PMI_FD", "PMI_PORT", "PMI_ID", "OMPI_COMM_WORLD_SIZE",
                    "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMIX_NAMESPACE")
ROOT_AND_OVERSUBSCRIBE = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                          "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_hwloc_base_binding_policy": "none",
                          "UCX_LOG_LEVEL": "error"}


def under_mpiexec() -> bool:
    """True in a process an MPI launcher started (its environment variables are set)."""
    return any(name in os.environ for name in LAUNCH_VARIABLES)


def mpiexec_path() -> str | None:
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


def mpi_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARIABLES}
    env.update(ROOT_AND_OVERSUBSCRIBE)
    return env


def run_mpi(n: int, argv: list[str], timeout: float,
            cwd: str | os.PathLike[str] | None = None) -> subprocess.CompletedProcess[str]:
    mpiexec = mpiexec_path()
    if mpiexec is None:
        raise FileNotFoundError("mpiexec not found (pip install mpich mpi4py)")
    return subprocess.run([mpiexec, "-n", str(n), *argv], capture_output=True, text=True, timeout=timeout,
                          env=mpi_environment(), cwd=cwd)
