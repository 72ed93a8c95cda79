"""`tilecc trace kernel.py:fn --input NAME=FILE.npy|NAME=f32[256,96] ... [-o OUT.klr.json]`:
trace an NKI kernel written in Python to KLR JSON (KLR HEAD form, tilecc/klr/read.py).
`kernel.py:fn[2,2]` traces an SPMD launch grid: every program into one KLR kernel.

Contract: imports the file, traces the function once with HBM inputs of the given shapes
and dtypes -- a .npy file's (the data is not read) or a shape written out, `NAME=f32[256,96]`
(HLO or numpy dtype names); `NAME=NUMBER` or a 0-d .npy is a scalar argument, passed as a
Python number (commands/inputs.py) -- and writes the KLR kernel atomically to OUT (default
stdout): JSON, or with `--format=text` a readable listing, one statement per line
(tilecc/klr/listing.py). A kernel error is one line `kernel.py:LINE:COL: error: ...` with
the source line, and exit 1; so is tracing beyond `--max-trace-steps N` trace steps
(tilecc.limits).
"""

from __future__ import annotations

import argparse

from tilecc.commands import step_count
from tilecc.commands.inputs import ARRAY, NUMBER, SHAPE
from tilecc.commands.run import TRACE_STEPS_HELP
from tilecc.commands.run_kernel import kernel_arguments, require_all
from tilecc.commands.stages import refuse_wrong_stage
from tilecc.errors import TileccError
from tilecc.fileio import refuse_overwriting, write_text_atomic
from tilecc.klr.listing import format_kernel
from tilecc.klr.read import write_kernel_json
from tilecc.limits import raised
from tilecc.nki.driver import ArgSpec, trace_kernel
from tilecc.nki.loader import kernel_failure, load_kernel, split_target

HELP = "trace an NKI kernel written in Python (file.py:function) to KLR JSON"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help="kernel.py:function, or kernel.py:function[GX,GY] for an SPMD "
                                       "launch grid")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="shape and dtype of the argument NAME: a .npy file or a shape such "
                             "as f32[256,96]; NAME=NUMBER for a scalar argument (repeatable)")
    parser.add_argument("-o", "--output", default="-", help="KLR JSON output file (default stdout)")
    parser.add_argument("--format", choices=["json", "text"], default="json",
                        help="KLR JSON (default) or a readable listing")
    parser.add_argument("--max-trace-steps", type=step_count, default=None, metavar="N",
                        help=TRACE_STEPS_HELP.removeprefix("kernels: "))


def run(args: argparse.Namespace) -> int:
    with raised("trace-steps", args.max_trace_steps):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    refuse_wrong_stage(args.target, "trace")
    refuse_overwriting(args.output, split_target(args.target)[0], "kernel file")
    kernel = load_kernel(args.target)
    arrays = kernel_arguments(args.input, kernel, (ARRAY, NUMBER, SHAPE), mmap=True)
    require_all(kernel, arrays)
    specs = {name: a if isinstance(a, (int, float)) else ArgSpec(tuple(a.shape), a.dtype)
             for name, a in arrays.items()}
    try:
        traced = trace_kernel(kernel, **specs)
    except (TileccError, MemoryError):  # MemoryError: the CLI's one line
        raise
    except Exception as err:
        raise kernel_failure(err) from None
    text = format_kernel(traced.kernel) if args.format == "text" \
        else write_kernel_json(traced.kernel) + "\n"
    write_text_atomic(args.output, text)
    return 0
