"""Driver of tests/hlo/test_verify_mpi.py (not collected): under mpiexec, for every pair
`BEFORE.hlo AFTER.hlo` on the command line, run equivalence_mpi.check_equivalence_mpi with
the module's replica_count and SEED, and on rank 0 write DIR/<pair number>.txt holding the
verdict ("True" / "False") and the lines it printed.

`python mpi_verify_driver.py DIR SEED BEFORE AFTER [BEFORE AFTER ...]`
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from tilecc.hlo.equivalence_mpi import check_equivalence_mpi
from tilecc.hlo.parser import parse_module
from tilecc.host.runtime.mpi_world import mpi


def main(argv: list[str]) -> int:
    comm = mpi().COMM_WORLD
    out, seed, files = Path(argv[0]), int(argv[1]), argv[2:]
    for number in range(len(files) // 2):
        before, after = (parse_module(Path(f).read_text(), f) for f in files[2 * number:2 * number + 2])
        lines = io.StringIO()
        equal = check_equivalence_mpi(before, after, before.replica_count, seed, {}, lines, comm)
        if comm.Get_rank() == 0:
            (out / f"{number}.txt").write_text(f"{equal}\n{lines.getvalue()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
