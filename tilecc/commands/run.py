"""`tilecc run`: execute an HLO module (N replicas) or an NKI kernel written in Python.

`tilecc run IN.hlo --replicas N ...` goes to tilecc.commands.run_hlo;
`tilecc run kernel.py:fn ...` (a Python file and a function name) goes to
tilecc.commands.run_kernel. Both write .npy files into --out.
"""

from __future__ import annotations

import argparse
import importlib

from tilecc.commands import seed_value
from tilecc.errors import TileccError

HELP = "execute an HLO module on N replicas, or trace + lower + simulate an NKI kernel (file.py:fn)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help="IN.hlo (or - for stdin), or kernel.py:function[GRID]")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an input array by parameter / argument name, or NAME=NUMBER for a "
                        "scalar kernel argument (repeatable)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the .npy outputs")
    parser.add_argument("--replicas", type=int, default=None,
                        help="HLO only: number of replicas (default: the module's replica_count)")
    parser.add_argument("--seed", type=seed_value, default=0,
                        help="HLO only: seed of the random values for parameters without --input")
    parser.add_argument("--html", metavar="REPORT.html",
                        help="kernels only: write the kernel report page (source, KLR, BIR linked)")
    parser.add_argument("--check", action="store_true",
                        help="kernels only: compare with the KLR reference interpreter (exit 2 "
                        "on a difference); with --html, a picture of the difference")


def is_kernel_target(target: str) -> bool:
    path, sep, function = target.rpartition(":")
    # a launch grid may follow the function name: kernel.py:fn[2,2]
    return bool(sep) and path.endswith(".py") and function.split("[", 1)[0].isidentifier()


def run(args: argparse.Namespace) -> int:
    module_name = "run_kernel" if is_kernel_target(args.target) else "run_hlo"
    if module_name == "run_hlo" and (args.html or args.check):
        raise TileccError("--html and --check apply to kernels (kernel.py:fn); draw an HLO "
                          "module with `tilecc hlo-graph`")
    return int(importlib.import_module(f"tilecc.commands.{module_name}").run(args))
