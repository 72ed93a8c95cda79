"""`tilecc nki --list-supported`: what the NKI frontend implements.

Contract: prints one line per module (tilecc/nki/supported.py): its name, how many names,
then the names; exit 0. Without a flag it prints the usage line and exits 1.
"""

from __future__ import annotations

import argparse

HELP = "the NKI frontend: --list-supported prints the nki / nki.language / nki.isa names tilecc implements"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--list-supported", action="store_true",
                        help="list the implemented names of each NKI module")


def run(args: argparse.Namespace) -> int:
    if not args.list_supported:
        print("usage: tilecc nki --list-supported")
        return 1
    from tilecc.nki.supported import render_supported
    print(render_supported())
    return 0
