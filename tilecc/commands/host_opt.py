"""`tilecc host-opt`: run host passes on a pypto host program and print the result.

Contract: reads PROGRAM.py (or - for stdin), runs the passes named by --passes (default:
synthesize-allreduce-signals) with the print -> parse round-trip check after each, and
writes the program atomically to -o (default stdout). Bad input or a pass rejecting the
program prints one line `path:line:col: error: ...` and exits 1; the input is never touched.
Only host orchestrators inside @pl.program classes are rewritten (pypto's pass sees
program functions only); a module-level @pl.function is printed unchanged.
"""

from __future__ import annotations

import argparse
import sys

from tilecc.errors import TileccError
from tilecc.fileio import read_text, write_text_atomic
from tilecc.host.parser import parse_module
from tilecc.host.pass_manager import PassPipeline
from tilecc.host.passes import PASSES, get_pass
from tilecc.host.printer import print_module

HELP = "run host DSL passes (SynthesizeAllReduceSignals) on a pypto host program"
DESCRIPTION = (HELP + ". SynthesizeAllReduceSignals rewrites the host orchestrators (level HOST and "
               "type Orchestration or role Orchestrator) of @pl.program classes; a module-level "
               "@pl.function outside any program class is left unchanged, as pypto's pass only "
               "sees program functions.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("program", nargs="?", metavar="PROGRAM.py", help="pypto host program (- for stdin)")
    parser.add_argument("--passes", default="synthesize-allreduce-signals",
                        help="comma-separated pass names, run in order (default: %(default)s)")
    parser.add_argument("-o", "--output", default="-", metavar="OUT.py", help="output file (default: stdout)")
    parser.add_argument("--no-verify", action="store_true",
                        help="skip the print -> parse round-trip check after each pass")
    parser.add_argument("--list-passes", action="store_true", help="list the host passes and exit")


def run(args: argparse.Namespace) -> int:
    if args.list_passes:
        for name, cls in PASSES.items():
            print(f"{name:32} {cls.display_name}: {cls.summary}")
        return 0
    if args.program is None:
        raise TileccError("host-opt: expected PROGRAM.py (or --list-passes)")
    path = args.program if args.program != "-" else "<stdin>"
    passes = [get_pass(name.strip()) for name in args.passes.split(",") if name.strip()]
    text = read_text(args.program)
    try:
        module = parse_module(text, path)
        result = PassPipeline(passes, verify_round_trip=not args.no_verify, path=path).run(module)
    except TileccError as err:   # ParseError, or the pass's error at the call's line:col
        print(err, file=sys.stderr)
        return 1
    write_text_atomic(args.output, print_module(result))
    return 0
