"""`tilecc demo`: the main job on the bundled inputs in examples/, stage by stage.

The examples ship inside the package (`tilecc/examples`, a link to the repository's
examples/ in a checkout, package data in a wheel), so the demo runs the same from a clone
and from an installed wheel."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from tilecc.errors import TileccError

HELP = "run every component on the bundled examples and check the results"

# In pipeline order: HLO passes, host DSL pass, KLR kernel -> BIR -> simulator, NKI kernel.
STAGES = ["hlo", "host", "kernel", "nki", "tensor_engine"]
# what the stages read under --examples
FOLDERS = ("hlo", "host", "klr", "kernels")


def default_examples() -> Path:
    return Path(__file__).resolve().parents[1] / "examples"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--examples", default=str(default_examples()),
                        help="folder with the bundled inputs (default: the examples installed with "
                        "tilecc)")
    parser.add_argument("--stage", action="append", choices=STAGES,
                        help="run only this stage (repeatable)")
    parser.add_argument("--html", metavar="REPORT.html",
                        help="also write the whole demo as one page, with its pictures")


def run(args: argparse.Namespace) -> int:
    examples = Path(args.examples)
    if not examples.is_dir():
        raise TileccError(f"{examples}: not a folder (expected the examples folder, with "
                          f"{', '.join(sorted(FOLDERS))} inside)")
    if args.html:
        from tilecc.viz.demo_page import write_demo_page
        return write_demo_page(args.html, examples, args.stage or STAGES)
    ok = True
    for name in args.stage or STAGES:
        module = importlib.import_module(f"tilecc.demo_stages.{name}")
        print(f"== {module.TITLE}", flush=True)
        stage_ok = module.run_stage(examples, sys.stdout)
        print(f"== {module.TITLE}: {'ok' if stage_ok else 'FAILED'}\n", flush=True)
        ok = ok and stage_ok
    return 0 if ok else 1
