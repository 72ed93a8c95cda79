"""`mpiexec -n R tilecc run IN.hlo --replicas N ... --out DIR`: the HLO run of run_hlo.py
with the N * partitions devices spread over the R MPI processes (tilecc/hlo/interp_mpi.py).

Contract: the same inputs, outputs and messages as the single-process run, bit for bit
(--partitions, --max-steps, --save-inputs and the size check included).
Every process parses the module and draws the same seeded inputs (random_inputs.entry_inputs,
as run_hlo does, keeping its own devices' rows); the interpreter runs each process's
devices only and exchanges rows at collectives. Rank 0 gathers the outputs and writes
DIR/out<k>.npy (and the inputs, with --save-inputs); an error is reported once, by rank 0, and every process exits 1
(mpi_report.report_once).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from tilecc.commands.mpi_report import report_once
from tilecc.commands.outputs import write_results
from tilecc.errors import InterpError, TileccError
from tilecc.fileio import read_text
from tilecc.hlo.interp_mpi import evaluate_module_mpi, local_devices
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import entry_inputs
from tilecc.host.runtime.mpi_world import mpi
from tilecc.limits import LimitError


def run(args: argparse.Namespace) -> int:
    comm = mpi().COMM_WORLD
    saved: list[tuple[str, np.ndarray]] = []

    def outputs_of_my_devices() -> list[np.ndarray]:
        from tilecc.commands.run_hlo import check_sizes_of, read_inputs, saved_inputs
        path = "<stdin>" if args.target == "-" else args.target
        module = parse_module(read_text(args.target), path)
        replicas = module.replica_count if args.replicas is None else args.replicas
        partitions = module.num_partitions if args.partitions is None else args.partitions
        if replicas < 1 or partitions < 1:
            raise TileccError(f"--replicas and --partitions must be at least 1, got "
                              f"{replicas} and {partitions}")
        devices = replicas * partitions
        check_sizes_of(path, module, devices, args.max_steps)
        mine = local_devices(devices, comm.Get_size(), comm.Get_rank())
        given = read_inputs(module, list(args.input or []), devices)
        inputs = entry_inputs(module, devices, np.random.default_rng(args.seed), given, rows=mine)
        if args.save_inputs:   # this process's rows of every leaf; rank 0 joins them
            saved.extend(saved_inputs(module, inputs))
        try:
            return evaluate_module_mpi(module, inputs, replicas, partitions, comm,
                                       args.max_steps)
        except (InterpError, LimitError) as err:
            raise type(err)(f"{path}: {err}") from None

    outputs = report_once(comm, outputs_of_my_devices)
    if outputs is None:
        return 1
    if args.save_inputs:
        _write_joined(comm, args.save_inputs, saved, "--save-inputs")
    _write_joined(comm, args.out, [(f"out{k}", o) for k, o in enumerate(outputs)], "--out")
    return 0


def _write_joined(comm: Any, folder: str, arrays: list[tuple[str, np.ndarray]],
                  option: str) -> None:
    """Rank 0 writes each array with every process's device rows, in device order."""
    gathered = comm.gather([np.ascontiguousarray(a) for _, a in arrays], root=0)
    if comm.Get_rank() == 0:
        write_results(folder, ((name, np.concatenate([g[k] for g in gathered]))
                               for k, (name, _) in enumerate(arrays)), option)
