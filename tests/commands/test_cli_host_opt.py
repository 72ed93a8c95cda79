"""`tilecc host-opt` as a user runs it (a subprocess): a line per pass saying whether it
changed the program, --dump-dir, and files that are not pypto programs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tilecc.host.parser import parse_module

REPO = Path(__file__).resolve().parents[2]
MESH = REPO / "examples" / "host" / "allreduce_mesh.py"


def tilecc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tilecc", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_each_pass_reports_whether_it_changed_the_program_and_dumps(tmp_path: Path) -> None:
    done = tilecc("host-opt", str(MESH), "-o", "out.py", "--dump-dir", "dumps", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "synthesize-allreduce-signals: changed\n"
    before = tmp_path / "dumps" / "01-synthesize-allreduce-signals.before.py"
    after = tmp_path / "dumps" / "01-synthesize-allreduce-signals.after.py"
    assert sorted(p.name for p in (tmp_path / "dumps").iterdir()) == [after.name, before.name]
    assert parse_module(before.read_text()) == parse_module(MESH.read_text())
    assert parse_module(after.read_text()) == parse_module((tmp_path / "out.py").read_text())
    again = tilecc("host-opt", "out.py", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == (tmp_path / "out.py").read_text()
    assert again.stderr == "synthesize-allreduce-signals: no change\n"


def test_a_file_without_pypto_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("x = 1\n")
    done = tilecc("host-opt", "plain.py", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("plain.py:1:1: error: not a pypto host program (no `import "
                           "pypto.language as pl`); host-opt rewrites pypto programs only\n")
    kernel = tilecc("host-opt", str(REPO / "examples" / "kernels" / "softmax_row.py"), cwd=tmp_path)
    assert kernel.returncode == 1
    assert "softmax_row.py:1:1: error: a Python file of NKI kernels, not a pypto host program" \
        in kernel.stderr


def test_a_pypto_file_without_a_program_class_gets_a_note(tmp_path: Path) -> None:
    (tmp_path / "nop.py").write_text("import pypto.language as pl\n\nx = 1\n")
    done = tilecc("host-opt", "nop.py", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "import pypto.language as pl\n\nx = 1\n"
    assert done.stderr.splitlines() == [
        "note: nop.py: no @pl.program class; the host passes have nothing to rewrite",
        "synthesize-allreduce-signals: no change"]
