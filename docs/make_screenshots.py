"""Make the README's screenshots with tilecc itself: write the pages with the commands the
README shows, open them in headless Chromium (tilecc.viz.browser), click what the picture
explains, and save PNGs under docs/img/.

Usage: .venv/bin/python docs/make_screenshots.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from tilecc.cli import main
from tilecc.viz.browser import RENDERED, open_browser, open_page, wait_until

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"


def shoot(context, page_file: Path, png: str, click: str | None) -> None:
    loaded = open_page(context, page_file)
    wait_until(loaded.page, RENDERED)
    if click is not None:
        loaded.page.click(click)
    loaded.page.screenshot(path=str(IMG / png))
    print(IMG / png)


def main_screenshots() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dump = work / "dump"
        assert main(["hlo-opt", str(ROOT / "examples" / "hlo" / "psum_max.hlo"),
                     "--passes=decompose-int-all-reduce,decompose-scalar-reduce",
                     "-o", str(work / "out.hlo"), "--dump-dir", str(dump),
                     "--dump-format=text,dot,html", "--verify"]) == 0
        a = np.random.default_rng(0).normal(0.0, 4.0, size=(256, 96)).astype(np.float32)
        np.save(work / "a.npy", a)
        assert main(["run", f"{ROOT / 'examples' / 'kernels' / 'softmax_row.py'}:softmax_row",
                     "--input", f"a={work / 'a.npy'}", "--out", str(work / "o"),
                     "--html", str(work / "report.html"), "--check"]) == 0
        IMG.mkdir(parents=True, exist_ok=True)
        with open_browser(1400, 1050) as context:
            shoot(context, dump / "01-decompose-int-all-reduce.html",
                  "before_after_int_all_reduce.png", ".match-block g.node.match")
            shoot(context, dump / "02-decompose-scalar-reduce.html",
                  "before_after_scalar_reduce.png", ".match-block g.node.match")
            shoot(context, work / "report.html", "kernel_report.png", "#ksrc-27")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_screenshots())
