"""The package type-checks: `python -m mypy` run from the repository root with the
[tool.mypy] configuration of pyproject.toml reports no errors. Its incremental cache lives
outside the checkout (one directory per checkout under the system's temporary directory,
so a second run is fast and the tree stays clean)."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(tempfile.gettempdir()) / f"tilecc-mypy-{hashlib.sha1(bytes(ROOT)).hexdigest()[:12]}"


def test_mypy_reports_no_errors() -> None:
    if importlib.util.find_spec("mypy") is None:
        reason = "mypy is not installed (it is in the test extras)"
        print(reason)
        pytest.skip(reason)
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(CACHE)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    output = proc.stdout + proc.stderr
    print(output)
    assert proc.returncode == 0, f"mypy exited with {proc.returncode}:\n{output}"
