"""The kernel demo stage on the bundled examples/klr kernels: every kernel passes, and a
broken bundled kernel makes the stage fail with one line naming it."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

from tilecc.demo_stages import kernel as stage

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_every_bundled_kernel_passes():
    out = io.StringIO()
    assert stage.run_stage(EXAMPLES, out)
    lines = out.getvalue().splitlines()
    names = sorted(p.name.split(".")[0] for p in (EXAMPLES / "klr").glob("*.klr.json"))
    assert len(lines) == len(names) >= 8
    for line, name in zip(lines, names):
        assert line.startswith(f"  [ok] {name}: "), line
    assert sum("== numpy" in line for line in lines) == 3


def test_a_broken_kernel_fails_the_stage(tmp_path):
    (tmp_path / "klr").mkdir()
    shutil.copy(EXAMPLES / "klr" / "softmax_row.klr.json", tmp_path / "klr")
    (tmp_path / "klr" / "bad.klr.json").write_text('{"name": "bad", "inputs": [')
    out = io.StringIO()
    assert not stage.run_stage(tmp_path, out)
    text = out.getvalue()
    assert "[FAILED] bad.klr.json: " in text and "[ok] softmax_row" in text


def test_no_kernels_is_a_failure(tmp_path):
    out = io.StringIO()
    assert not stage.run_stage(tmp_path, out)
    assert "no KLR kernels" in out.getvalue()
