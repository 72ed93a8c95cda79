"""The test suite writes nothing into the checkout: a small part of it (a Hypothesis
property test, so its database and caches are exercised, and pytest's session end, which
is where its cache would be written) runs in a copy of the tracked files, and afterwards
the copy holds no file the checkout did not have. Python's bytecode (`__pycache__`, which
any import may write when PYTHONDONTWRITEBYTECODE is unset) is the one exception. mypy's
cache directory is checked to lie outside the tree (a cold mypy run takes minutes)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import test_typecheck

ROOT = Path(__file__).resolve().parents[1]
PART = ["tests/nki/test_nki_access_properties.py::test_slice_round_trip",
        "tests/bir/test_tensor_scalar_variant.py::test_each_variant"]


def tracked_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        reason = "not a git checkout (or git missing): the tracked files are unknown"
        print(reason)
        pytest.skip(reason)
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [name for name in out.stdout.decode().split("\0") if name]


def files_under(top: Path) -> set[str]:
    found = set()
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        rel = Path(dirpath).relative_to(top)
        found |= {str(rel / name) for name in filenames + dirnames}
    return found


def test_a_part_of_the_suite_leaves_the_copy_unchanged(tmp_path: Path) -> None:
    copy = tmp_path / "checkout"
    for name in tracked_files():
        src, dst = ROOT / name, copy / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.symlink_to(os.readlink(src))
        elif src.is_file():
            shutil.copy2(src, dst)
    before = files_under(copy)
    env = {**os.environ, "PYTHONPATH": str(copy)}  # the copy's package, not the checkout's
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", *PART], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(files_under(copy) - before) == []


def test_mypy_cache_lies_outside_the_tree() -> None:
    assert not test_typecheck.CACHE.resolve().is_relative_to(ROOT)
