"""The picture flags of the commands: hlo-graph, hlo-opt --dump-format, run / codegen /
demo --html; bad input is one line and exit 1."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from tilecc.cli import main
from tilecc.viz.assets import viz_js_module

ROOT = Path(__file__).parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "hlo" / "psum_max.spmd.hlo"
BOTH = "--passes=decompose-int-all-reduce,decompose-scalar-reduce"


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_hlo_graph_writes_dot_and_a_page(tmp_path):
    assert main(["hlo-graph", str(FIXTURE), "-o", str(tmp_path / "g.dot")]) == 0
    dot = (tmp_path / "g.dot").read_text()
    assert dot.startswith('digraph "') and dot.count("[id=") == 18
    assert main(["hlo-graph", str(FIXTURE), "-o", str(tmp_path / "g.html")]) == 0
    page = (tmp_path / "g.html").read_text()
    assert 'data-view="module"' in page and "default-src 'none'" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)


@pytest.mark.skipif(shutil.which("node") is None or not viz_js_module().is_file(),
                    reason="SVG needs node and the viz-js package (python -m tilecc.viz.assets)")
def test_hlo_graph_svg_is_laid_out_by_graphviz(tmp_path):
    assert main(["hlo-graph", str(FIXTURE), "-o", str(tmp_path / "g.svg")]) == 0
    svg = (tmp_path / "g.svg").read_text()
    assert "<svg" in svg and svg.count('class="node"') == 18 and 'id="n0"' in svg


def test_hlo_graph_refuses_an_unknown_suffix_and_bad_hlo(tmp_path, capsys):
    assert main(["hlo-graph", str(FIXTURE), "-o", str(tmp_path / "g.png")]) == 1
    assert "expected .dot, .svg or .html" in _one_error_line(capsys)
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\n\nENTRY e {\n  p = f32[ parameter(0)\n}\n")
    assert main(["hlo-graph", str(bad), "-o", str(tmp_path / "g.dot")]) == 1
    err = capsys.readouterr().err     # the parser's located line, then the source and a caret
    assert err.startswith(f"{bad}:4:7: error: expected ") and "Traceback" not in err
    assert not (tmp_path / "g.dot").exists()


def test_hlo_opt_dump_formats(tmp_path, capsys):
    out = tmp_path / "out.hlo"
    dump = tmp_path / "d"
    assert main(["hlo-opt", str(FIXTURE), BOTH, "-o", str(out), "--dump-dir", str(dump),
                 "--dump-format=text,dot,html", "--verify"]) == 0
    names = sorted(p.name for p in dump.iterdir())
    assert names == sorted([f"0{i}-{p}.{w}.{x}" for i, p in
                            ((1, "decompose-int-all-reduce"), (2, "decompose-scalar-reduce"))
                            for w in ("before", "after") for x in ("hlo", "dot")] +
                           ["01-decompose-int-all-reduce.html", "02-decompose-scalar-reduce.html"])
    page = (dump / "01-decompose-int-all-reduce.html").read_text()
    assert '"verdict":{"ok":true,"text":"equal on interpreter' in page
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:      # argparse's one line, exit code 1
        main(["hlo-opt", str(FIXTURE), BOTH, "-o", str(out), "--dump-dir", str(dump),
              "--dump-format=text,svg"])
    assert exited.value.code == 1
    assert "unknown dump format 'svg'" in _one_error_line(capsys)


def test_run_kernel_html_and_check(tmp_path, capsys):
    a = np.random.default_rng(1).normal(size=(128, 32)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    kernel = f"{ROOT / 'examples' / 'kernels' / 'softmax_row.py'}:softmax_row"
    report = tmp_path / "r.html"
    assert main(["run", kernel, "--input", f"a={tmp_path / 'a.npy'}", "--out",
                 str(tmp_path / "o"), "--html", str(report), "--check"]) == 0
    assert "check: out: equal to the KLR interpreter (4096 elements)" in capsys.readouterr().err
    assert 'data-view="kernel"' in report.read_text()
    assert main(["run", str(FIXTURE), "--out", str(tmp_path / "o"), "--check"]) == 1
    assert "apply to kernels" in _one_error_line(capsys)


def test_codegen_html(tmp_path):
    report = tmp_path / "c.html"
    assert main(["codegen", str(ROOT / "examples" / "klr" / "rmsnorm.klr.json"), "-o",
                 str(tmp_path / "r.bir.json"), "--html", str(report)]) == 0
    assert 'data-view="kernel"' in report.read_text()


def test_demo_html_is_one_page(tmp_path, capsys):
    report = tmp_path / "demo.html"
    assert main(["demo", "--stage", "hlo", "--stage", "nki", "--html", str(report)]) == 0
    assert "== nki" in capsys.readouterr().out
    page = report.read_text()
    assert page.count('data-view="pass"') == 2 and page.count('data-view="kernel"') == 1


def test_dump_format_needs_a_dump_dir(tmp_path, capsys):
    assert main(["hlo-opt", str(FIXTURE), BOTH, "-o", str(tmp_path / "o.hlo"),
                 "--dump-format=html"]) == 1
    assert "--dump-format needs --dump-dir" in _one_error_line(capsys)


def test_a_page_without_its_layout_engine_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("tilecc.viz.page.viz_js_source", lambda: None)
    assert main(["hlo-graph", str(FIXTURE), "-o", str(tmp_path / "g.html")]) == 0
    note = _one_error_line(capsys)
    assert note.startswith("note: graph layout needs @viz-js/viz@")
    page = (tmp_path / "g.html").read_text()
    assert '<div class="note">graph layout needs' in page and "Copyright (c) Michael Daines" \
        not in page    # the engine's banner
