"""`mpiexec -n R tilecc run IN.hlo --replicas N ... --out DIR`: the HLO run of run_hlo.py
with the N * partitions devices spread over the R MPI processes (tilecc/hlo/interp_mpi.py).

Contract: the same inputs, outputs and messages as the single-process run, bit for bit.
Every process parses the module and draws the same seeded inputs (random_inputs.entry_inputs,
as run_hlo does, keeping its own devices' rows); the interpreter runs each process's
devices only and exchanges rows at collectives. Rank 0 gathers the outputs and writes
DIR/out<k>.npy; an error is reported once, by rank 0, and every process exits 1
(mpi_report.report_once).
"""

from __future__ import annotations

import argparse

import numpy as np

from tilecc.commands.mpi_report import report_once
from tilecc.errors import TileccError
from tilecc.fileio import read_text, write_npy_outputs
from tilecc.hlo.interp_mpi import evaluate_module_mpi, local_devices
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import entry_inputs
from tilecc.host.runtime.mpi_world import mpi


def run(args: argparse.Namespace) -> int:
    comm = mpi().COMM_WORLD

    def outputs_of_my_devices() -> list[np.ndarray]:
        from tilecc.commands.run_hlo import read_inputs
        module = parse_module(read_text(args.target), "<stdin>" if args.target == "-" else args.target)
        replicas = module.replica_count if args.replicas is None else args.replicas
        if replicas < 1:
            raise TileccError(f"--replicas must be at least 1, got {replicas}")
        devices = replicas * module.num_partitions
        mine = local_devices(devices, comm.Get_size(), comm.Get_rank())
        given = read_inputs(module, list(args.input or []), devices)
        inputs = entry_inputs(module, devices, np.random.default_rng(args.seed), given, rows=mine)
        return evaluate_module_mpi(module, inputs, replicas, module.num_partitions, comm)

    outputs = report_once(comm, outputs_of_my_devices)
    if outputs is None:
        return 1
    gathered = comm.gather([np.ascontiguousarray(o) for o in outputs], root=0)
    if comm.Get_rank() == 0:
        write_npy_outputs(args.out, ((f"out{k}", np.concatenate([g[k] for g in gathered]))
                                     for k in range(len(outputs))))
    return 0
