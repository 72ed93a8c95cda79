"""Driver of tests/hlo/test_interp_mpi.py (not collected): under mpiexec, run every HLO
file given on the command line with interp_mpi on this process's devices and, on rank 0,
write DIR/<file name>.npz with the gathered outputs (out0, out1, ...), or
DIR/<file name>.error with the message when the interpreter refuses the module.

`python mpi_hlo_driver.py DIR SEED FILE.hlo ...`; inputs are random_inputs(module,
replica_count, SEED, num_partitions), the same on every process.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from tilecc.errors import TileccError
from tilecc.hlo.interp_mpi import evaluate_module_mpi, local_devices
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.host.runtime.mpi_world import mpi


def main(argv: list[str]) -> int:
    comm = mpi().COMM_WORLD
    out, seed = Path(argv[0]), int(argv[1])
    for name in argv[2:]:
        module = parse_module(Path(name).read_text(), name)
        replicas, partitions = module.replica_count, module.num_partitions
        mine = local_devices(replicas * partitions, comm.Get_size(), comm.Get_rank())
        try:
            inputs = [x[mine] for x in random_inputs(module, replicas, seed, partitions)]
            result: list[np.ndarray] | str = evaluate_module_mpi(module, inputs, replicas, partitions, comm)
        except TileccError as err:
            result = str(err)
        gathered = comm.gather(result, root=0)
        if comm.Get_rank() == 0:
            if isinstance(gathered[0], str):
                (out / f"{Path(name).name}.error").write_text(gathered[0])
            else:
                np.savez(out / f"{Path(name).name}.npz",
                         **{f"out{k}": np.concatenate([g[k] for g in gathered]) for k in range(len(gathered[0]))})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
