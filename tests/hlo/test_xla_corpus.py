"""XLA's own test-suite modules (../shared/xla-hlo-tests, not part of the package) read,
printed and refused as XLA's parser does: runs the corpus' check.py with this checkout's
tilecc and compares its failures with xla_corpus_known_failures.txt (the modules still
open, each with its category), so a new failure and a fixed module both show here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.oracle

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "xla-hlo-tests"
KNOWN = Path(__file__).with_name("xla_corpus_known_failures.txt")
FAIL = re.compile(r"FAIL modules/(\S+) \[([^\],]+)")


@pytest.mark.skipif(not (CORPUS / "check.py").exists(),
                    reason=f"XLA's test corpus is not beside this checkout ({CORPUS}); it is "
                           "data for conformance runs, not part of the package")
def test_xla_test_corpus_conformance() -> None:
    pytest.importorskip("jax")
    tilecc = Path(sys.executable).with_name("tilecc")
    run = subprocess.run([sys.executable, str(CORPUS / "check.py"), "--tilecc", str(tilecc)],
                         cwd=ROOT, capture_output=True, text=True, timeout=900,
                         env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    summary = re.search(r"(\d+) passed, (\d+) failed", run.stdout)
    assert summary is not None, run.stdout[-2000:] + run.stderr[-2000:]
    failing = dict(FAIL.findall(run.stdout))
    known = dict(line.split() for line in KNOWN.read_text().splitlines()
                 if line and not line.startswith("#"))
    new = {name: cat for name, cat in failing.items() if known.get(name) != cat}
    fixed = sorted(set(known) - set(failing))
    assert not new, "new failures:\n" + "\n".join(
        line for line in run.stdout.splitlines() if any(n in line for n in new))
    assert not fixed, "fixed, take them off the known list: " + ", ".join(fixed)
    assert int(summary[2]) == len(known)
