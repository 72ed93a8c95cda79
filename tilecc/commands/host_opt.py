"""`tilecc host-opt`: run host passes on a pypto host program and print the result.

Contract: reads PROGRAM.py (or - for stdin), runs the passes named by --passes (default:
synthesize-allreduce-signals) with the print -> parse round-trip check after each, and
writes the program atomically to -o (default stdout). Bad input or a pass rejecting the
program prints one line `path:line:col: error: ...` and exits 1; the input is never touched.
Only host orchestrators inside @pl.program classes are rewritten (pypto's pass sees
program functions only); a module-level @pl.function is printed unchanged.
Output keeps the input's text wherever the passes changed nothing
(tilecc/host/source_splice.py): a program no pass changes is written back byte for byte,
otherwise only the rewritten functions are printed anew, in the input's line endings
(LF or CRLF) and encoding (UTF-8, with its byte order mark if it has one, or what a
`# -*- coding: ... -*-` line declares, as Python reads source).
stderr gets one line per pass, `NAME: changed` / `NAME: no change`; `--dump-dir DIR` writes
the program before and after each pass (`NN-<pass>.before.py` / `.after.py`, printed).
A file that does not import pypto is refused (it is not a host program; a kernel file is
named as such); a pypto file without any @pl.program class gets a note that the passes had
nothing to rewrite.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import tokenize
from pathlib import Path

from tilecc.commands.stages import refuse_wrong_stage
from tilecc.errors import ParseError, TileccError
from tilecc.fileio import not_decodable, read_bytes, write_bytes_atomic
from tilecc.host.parser import parse_module
from tilecc.host.passes import build_pipeline, list_passes, pass_names
from tilecc.host.source_splice import print_keeping_source
from tilecc.limits import cut_lines

_PYPTO_IMPORT = re.compile(r"^\s*(?:import|from)\s+pypto\b", re.MULTILINE)

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
                        help="skip the print -> parse round-trip checks (after each pass and of the output)")
    parser.add_argument("--list-passes", action="store_true", help="list the host passes and exit")
    parser.add_argument("--dump-dir", metavar="DIR",
                        help="write the program before and after each pass here")


def run(args: argparse.Namespace) -> int:
    if args.list_passes:
        sys.stdout.write(list_passes())
        return 0
    if args.program is None:
        raise TileccError("host-opt: expected PROGRAM.py (or --list-passes)")
    path = args.program if args.program != "-" else "<stdin>"
    refuse_wrong_stage(args.program, "host-opt")
    pipeline = build_pipeline(pass_names(args.passes), verify=not args.no_verify, path=path,
                              dump_dir=Path(args.dump_dir) if args.dump_dir else None)
    raw = read_bytes(args.program)
    text, encoding, newline = decode_source(raw, path)
    if not _PYPTO_IMPORT.search(text):
        raise ParseError(path, 1, 1, "not a pypto host program (no `import pypto.language as "
                         "pl`); host-opt rewrites pypto programs only")
    try:
        module = parse_module(text, path)
        if not module.programs:
            print(f"note: {path}: no @pl.program class; the host passes have nothing to rewrite",
                  file=sys.stderr)
        result = pipeline.run(module, lambda name, changed: print(
            f"{name}: {'changed' if changed else 'no change'}", file=sys.stderr))
    except TileccError as err:   # ParseError, or the pass's error at the call's line:col
        print(cut_lines(str(err)), file=sys.stderr)
        return 1
    if result is module:
        write_bytes_atomic(args.output, raw)
        return 0
    printed = print_keeping_source(text, module, result, path, verify=not args.no_verify)
    write_bytes_atomic(args.output, printed.replace("\n", newline).encode(encoding))
    return 0


def decode_source(raw: bytes, path: str) -> tuple[str, str, str]:
    """(text with "\n" line ends, encoding, line ending) of Python source bytes, decoded as
    Python does: UTF-8, after a byte order mark (kept by the "utf-8-sig" codec) or in the
    encoding a `# -*- coding: ... -*-` line declares."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        decoded = raw.decode(encoding)
    except SyntaxError as err:
        if "invalid or missing encoding declaration" not in str(err):
            raise TileccError(f"{path}: cannot read: {err}") from None
        try:  # the first two lines are not UTF-8: locate the byte
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise not_decodable(raw, bad, path, "not UTF-8 text, and no "
                                "`# -*- coding: ... -*-` line declares another encoding") from None
        raise TileccError(f"{path}: cannot read: {err}") from None
    except UnicodeDecodeError as err:
        if encoding == "utf-8-sig":  # its positions start after the byte order mark
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as whole:
                raise not_decodable(raw, whole, path) from None
        raise not_decodable(raw, err, path) from None
    newline = "\r\n" if "\r\n" in decoded else "\n"
    return decoded.replace("\r\n", "\n").replace("\r", "\n"), encoding, newline
