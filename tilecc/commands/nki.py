"""`tilecc nki --list-supported`: what the NKI frontend implements.

Contract: prints one line per module (tilecc/nki/supported.py): its name, how many names,
then the names; exit 0. Without a flag it is a one-line error, exit 1.
"""

from __future__ import annotations

import argparse

from tilecc.errors import TileccError

HELP = "the NKI frontend: --list-supported prints the nki / nki.language / nki.isa names tilecc implements"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--list-supported", action="store_true",
                        help="list the implemented names of each NKI module")


def run(args: argparse.Namespace) -> int:
    if not args.list_supported:
        raise TileccError("nki: expected --list-supported")
    from tilecc.nki.supported import render_supported
    print(render_supported())
    return 0
