"""Host programs on MPI: `mpiexec -n N tilecc host-run` equals `tilecc host-run --ranks N`
bit for bit (text and .npy), failures and timeouts are one located line naming the rank,
and the stress driver (mpi_stress.py) holds on 2, 4 and 8 ranks of both backends.

Every mpiexec run is bounded by a timeout; the counts are small enough for CI on 2 cores
(bench/host_mpi.py runs the thousands-of-allreduces version)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tilecc.mpi_launch import mpi_environment, mpiexec_path, run_mpi

from .conftest import EXAMPLES, HEADER

pytestmark = [pytest.mark.mpi,
              pytest.mark.skipif(mpiexec_path() is None, reason="mpiexec not installed (test extra: mpich)")]
TILECC = [sys.executable, "-m", "tilecc.cli"]
STRESS = str(Path(__file__).with_name("mpi_stress.py"))
LIMIT = 120   # seconds any one launch may take before the test fails instead of hanging


def threaded(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TILECC, *argv], capture_output=True, text=True, timeout=LIMIT, env=mpi_environment())


PROGRAMS = Path(__file__).with_name("programs")


@pytest.mark.parametrize("program, ranks, extra", [
    (EXAMPLES / "allreduce_mesh.py", 2, []), (EXAMPLES / "allreduce_two_buffers_loop.py", 4, []),
    (PROGRAMS / "pld_ops.py", 3, []), (PROGRAMS / "pypto_forms.py", 3, ["--dim", "NR=3"])],
    ids=["mesh", "loop", "pld_ops", "pypto_forms"])
def test_mpiexec_host_run_equals_threaded_bit_for_bit(tmp_path, program, ranks, extra):
    program = str(program)
    threads = threaded(["host-run", program, *extra, "--ranks", str(ranks), "--out", str(tmp_path / "t")])
    procs = run_mpi(ranks, [*TILECC, "host-run", program, *extra, "--out", str(tmp_path / "m")], LIMIT)
    assert threads.returncode == 0, threads.stderr
    assert procs.returncode == 0, procs.stderr
    lines = [line for line in threads.stdout.splitlines() if line.startswith("rank ")]
    assert len(lines) == ranks
    assert procs.stdout.replace(str(tmp_path / "m"), "") == threads.stdout.replace(str(tmp_path / "t"), "")
    a, b = np.load(tmp_path / "t" / "out0.npy"), np.load(tmp_path / "m" / "out0.npy")
    assert a.shape[0] == ranks and a.tobytes() == b.tobytes()


FAILING = HEADER + """\
@pl.program
class Fails:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self):
        buf = pld.alloc_window_buffer(16)
        data = pld.window(buf, [4], dtype=pl.FP32)
        if pld.system.rank() == 2:
            data = pl.load(data, [0], [9])
        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
        return data
"""


@pytest.mark.parametrize("source, expected", [
    (FAILING, "error: rank 2: {path}:11:20: pl.load: region 0:9 of axis 0 is outside extent 4\n"),
    (FAILING.replace("if pld.system.rank() == 2:\n            data = pl.load(data, [0], [9])\n        ", ""
                     ).replace("        data = pld.tensor.allreduce", "        if pld.system.rank() == 0:\n"
                               "            data = pld.tensor.allreduce"),
     "error: rank 0: {path}:11:20: timed out after 1.0s waiting for signal cells [(1, 0), (2, 0)] "
     "to reach 1 (values [0, 0])\n"),
])
def test_a_failing_or_hanging_rank_stops_every_rank_with_one_line(tmp_path, source, expected):
    path = tmp_path / "p.py"
    path.write_text(source)
    argv = ["host-run", str(path), "--timeout", "1"]
    threads = threaded([*argv, "--ranks", "3"])
    procs = run_mpi(3, [*TILECC, *argv], LIMIT)
    for result in (threads, procs):
        assert result.returncode == 1
        assert result.stderr == expected.format(path=path)
        assert result.stdout == ""


def test_the_two_rank_mesh_example_on_four_ranks_is_a_located_line():
    """The example's host tensors are [NR = 2, ...]; rank 0 indexes inputs[2] for device 2."""
    mesh = EXAMPLES / "allreduce_mesh.py"
    expected = (f"error: rank 0: {mesh}:55:31: `inputs[2]`: index 2 is out of bounds for axis 0 "
                "with size 2 (inputs is float32[2, 1, 64])\n")
    for result in (threaded(["host-run", str(mesh), "--ranks", "4"]),
                   run_mpi(4, [*TILECC, "host-run", str(mesh)], LIMIT)):
        assert (result.returncode, result.stdout, result.stderr) == (1, "", expected)


def test_ranks_must_match_the_process_count():
    procs = run_mpi(2, [*TILECC, "host-run", str(EXAMPLES / "allreduce_mesh.py"), "--ranks", "3"], LIMIT)
    assert procs.returncode == 1
    assert procs.stderr == "error: --ranks 3 but mpiexec started 2 processes\n"


@pytest.mark.parametrize("ranks, iterations, reads", [(2, 40, "direct"), (4, 12, "direct"), (8, 4, "direct"),
                                                      (3, 12, "get")])
def test_stress_reused_signals_on_mpi_processes(ranks, iterations, reads):
    """reads: loads from the peers' shared-memory segments (one node), or MPI_Get (the
    path of ranks on several nodes), forced here on one."""
    result = run_mpi(ranks, [sys.executable, STRESS, str(iterations), "0.002", reads], LIMIT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == f"stress ok: {ranks} ranks, {iterations} iterations, {4 * iterations} allreduces\n"


@pytest.mark.parametrize("ranks", [2, 4, 8])
def test_stress_reused_signals_on_threads(ranks):
    result = subprocess.run([sys.executable, STRESS, "40", "0.0005", str(ranks)], capture_output=True,
                            text=True, timeout=LIMIT, env=mpi_environment())
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == f"stress ok: {ranks} ranks, 40 iterations, 160 allreduces\n"
