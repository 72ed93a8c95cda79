"""`hlo-opt --verify` with the devices spread over MPI processes (hlo/equivalence_mpi.py,
commands/hlo_opt_mpi.py): the verdict and every line of it equal the single-process check
(equal, a mismatch first seen on a device of a later process, a shape mismatch, a missing
output), and `mpiexec tilecc hlo-opt --verify` prints the single-process verdict and output.
Every launch is bounded by a timeout."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from tilecc.hlo.equivalence import check_equivalence
from tilecc.hlo.parser import parse_module
from tilecc.mpi_launch import mpi_environment, mpiexec_path, run_mpi

pytestmark = [pytest.mark.mpi,
              pytest.mark.skipif(mpiexec_path() is None, reason="mpiexec not installed (test extra: mpich)")]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hlo"
DRIVER = str(Path(__file__).with_name("mpi_verify_driver.py"))
TILECC = [sys.executable, "-m", "tilecc.cli"]
LIMIT = 120
SEED = 7
BEFORE = """\
HloModule m, replica_count=4

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY main {
  x = s32[5] parameter(0)
  ar = s32[5] all-reduce(x), replica_groups={{0,3},{1,2}}, to_apply=add
  ROOT t = (s32[5], s32[5]) tuple(ar, x)
}
"""
# device 2 and 3 (the second and third of 3 processes' blocks {0, 1}, {2}, {3}) differ
LATE = BEFORE.replace("  ROOT t = (s32[5], s32[5]) tuple(ar, x)", """\
  id = u32[] replica-id()
  two = u32[] constant(2)
  late = pred[] compare(id, two), direction=GE
  mask = pred[5] broadcast(late), dimensions={}
  one = s32[5] broadcast(s32[] constant(1)), dimensions={}
  bumped = s32[5] add(ar, one)
  chosen = s32[5] select(mask, bumped, ar)
  ROOT t = (s32[5], s32[5]) tuple(chosen, x)""")
SHAPE = BEFORE.replace("  ROOT t = (s32[5], s32[5]) tuple(ar, x)", """\
  head = s32[3] slice(x), slice={[0:3]}
  ROOT t = (s32[5], s32[3]) tuple(ar, head)""")
FEWER = BEFORE.replace("  ROOT t = (s32[5], s32[5]) tuple(ar, x)", "  ROOT t = (s32[5]) tuple(ar)")


def test_the_spread_verdict_is_the_single_process_one(tmp_path):
    pairs = [(BEFORE, BEFORE), (BEFORE, LATE), (BEFORE, SHAPE), (BEFORE, FEWER)]
    files = []
    for number, pair in enumerate(pairs):
        for side, text in zip("ab", pair):
            (path := tmp_path / f"{number}{side}.hlo").write_text(text)
            files.append(str(path))
    result = run_mpi(3, [sys.executable, DRIVER, str(tmp_path), str(SEED), *files], LIMIT)
    assert result.returncode == 0, result.stderr
    verdicts = []
    for number, (before, after) in enumerate(pairs):
        lines = io.StringIO()
        equal = check_equivalence(parse_module(before), parse_module(after), 4, SEED, "interpreter", {}, lines)
        assert (tmp_path / f"{number}.txt").read_text() == f"{equal}\n{lines.getvalue()}"
        verdicts.append((equal, lines.getvalue().splitlines()[1]))
    assert verdicts[0] == (True, "  output 0: equal")
    assert verdicts[1][0] is False and verdicts[1][1].startswith("  output 0: mismatch at device 2, index [")
    assert verdicts[2][0] is False and verdicts[3][0] is False


def test_mpiexec_hlo_opt_verify_prints_the_single_process_verdict(tmp_path):
    module = str(FIXTURES / "psum_s32_4dev.spmd.hlo")
    argv = ["hlo-opt", module, "--passes=decompose-int-all-reduce", "--verify"]
    single = subprocess.run([*TILECC, *argv, "-o", str(tmp_path / "a.hlo")], capture_output=True,
                            text=True, timeout=LIMIT, env=mpi_environment())
    spread = run_mpi(2, [*TILECC, *argv, "-o", str(tmp_path / "b.hlo")], LIMIT)
    assert single.returncode == spread.returncode == 0, single.stderr + spread.stderr
    assert (tmp_path / "a.hlo").read_text() == (tmp_path / "b.hlo").read_text()
    one, many = single.stderr.splitlines(), spread.stderr.splitlines()
    assert one[1] == f"verify: running {module} before and after the passes on interpreter ..."
    assert many[1] == one[1].replace("interpreter ...", "interpreter over 2 MPI processes ...")
    assert one[:1] + one[2:] == many[:1] + many[2:] and one[-1] == "  output 0: equal"


def test_mpiexec_hlo_opt_refuses_the_xla_oracle_once():
    spread = run_mpi(2, [*TILECC, "hlo-opt", str(FIXTURES / "psum_max.spmd.hlo"), "--oracle=xla"], LIMIT)
    assert spread.returncode == 1 and spread.stdout == ""
    assert spread.stderr == ("error: --oracle=xla runs XLA in one process; run hlo-opt without mpiexec "
                             "(under mpiexec, --verify runs the interpreter over the processes)\n")
