"""The package as pip installs it: a wheel built from this tree, installed into a fresh venv
outside the repository, runs `tilecc demo` on the examples it carries and `tilecc hlo-opt`.

pip works as configured on the machine (its cache, local indexes): only the wheel's own
dependencies (numpy, ml_dtypes, msgspec) are installed, no extra.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

from tilecc.commands.demo import STAGES

import pytest

REPO = Path(__file__).resolve().parents[1]
MODULE = """HloModule psum, replica_count=4

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY main {
  p = s32[] parameter(0)
  ROOT r = s32[] all-reduce(p), replica_groups={{0,1,2,3}}, to_apply=add
}
"""


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_wheel_installs_and_runs_outside_the_repository(tmp_path: Path) -> None:
    built = _pip("wheel", str(REPO), "--no-deps", "-q", "-w", str(tmp_path / "dist"))
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("tilecc-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for member in ("tilecc/py.typed", "tilecc/__main__.py", "tilecc/examples/hlo/psum_max.hlo",
                   "tilecc/examples/kernels/softmax_row.py"):
        assert member in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("/METADATA")))
    assert b"License-Expression: Apache-2.0" in metadata
    assert b"Provides-Extra: xla" in metadata

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)   # the running pip installs into it (--python)
    python = env_dir / "bin" / "python"
    installed = _pip("--python", str(python), "install", "-q", str(wheel))
    assert installed.returncode == 0, installed.stderr

    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "in.hlo").write_text(MODULE)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    tilecc = str(env_dir / "bin" / "tilecc")
    demo = subprocess.run([tilecc, "demo"], cwd=work,
                          env=env, capture_output=True, text=True, timeout=300)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "FAILED" not in demo.stdout and demo.stdout.count(": ok\n") == len(STAGES)
    opt = subprocess.run([tilecc, "hlo-opt", "in.hlo", "--passes=decompose-int-all-reduce"],
                         cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert opt.returncode == 0, opt.stderr
    assert "all-gather(" in opt.stdout and "all-reduce(" not in opt.stdout
    module = subprocess.run([str(python), "-m", "tilecc", "--version"], cwd=work, env=env,
                            capture_output=True, text=True, timeout=60)
    assert module.stdout.strip() == "tilecc 0.1.0"
    where = subprocess.run([str(python), "-c", "import tilecc; print(tilecc.__file__)"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert where.stdout.startswith(str(env_dir))
