"""`mpiexec -n R tilecc run IN.hlo --replicas N ... --out DIR`: the HLO run of run_hlo.py
with the N * partitions devices spread over the R MPI processes (tilecc/hlo/interp_mpi.py).

Contract: the same inputs, outputs and messages as the single-process run, bit for bit.
Every process parses the module and draws the same seeded inputs (as run_hlo does, for
all devices, then keeps its own devices' rows and drops the rest); the interpreter runs
each process's devices only and exchanges rows at collectives. Rank 0 gathers the outputs
and writes DIR/out<k>.npy; an error is reported once, by rank 0, and every process exits 1.
"""

from __future__ import annotations

import argparse

import numpy as np

from tilecc.errors import TileccError
from tilecc.fileio import read_text, write_npy_outputs
from tilecc.hlo.interp_mpi import evaluate_module_mpi, local_devices
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_array
from tilecc.host.runtime.mpi_world import mpi


def run(args: argparse.Namespace) -> int:
    comm = mpi().COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    from tilecc.commands.run_hlo import read_inputs
    error: TileccError | None = None
    outputs: list[np.ndarray] = []
    try:
        module = parse_module(read_text(args.target), "<stdin>" if args.target == "-" else args.target)
        replicas = module.replica_count if args.replicas is None else args.replicas
        if replicas < 1:
            raise TileccError(f"--replicas must be at least 1, got {replicas}")
        devices = replicas * module.num_partitions
        mine = local_devices(devices, size, rank)
        given = read_inputs(module, list(args.input or []), devices)
        rng = np.random.default_rng(args.seed)
        assert module.entry is not None
        inputs = []
        for param in module.entry.parameters:
            drawn = random_array(param.shape, devices, rng, param.name)
            inputs.append(np.ascontiguousarray(given.get(param.parameter_number or 0, drawn)[mine]))
            del drawn
        outputs = evaluate_module_mpi(module, inputs, replicas, module.num_partitions, comm)
    except TileccError as err:
        error = err
    failures = comm.allgather(None if error is None else str(error))
    if any(failures):
        if rank == 0:   # the input is the same everywhere: rank 0's own error, else the first
            raise error if error is not None else TileccError(next(f for f in failures if f))
        return 1
    gathered = comm.gather([np.ascontiguousarray(o) for o in outputs], root=0)
    if rank == 0:
        write_npy_outputs(args.out, ((f"out{k}", np.concatenate([g[k] for g in gathered]))
                                     for k in range(len(outputs))))
    return 0
