"""`tilecc run`: execute an HLO module (N replicas) or an NKI kernel written in Python.

`tilecc run IN.hlo --replicas N ...` goes to tilecc.commands.run_hlo;
`tilecc run kernel.py:fn ...` (a Python file and a function name) goes to
tilecc.commands.run_kernel. Both write .npy files into --out with a summary line each
(commands/outputs.py). `kernel.py` without `:FUNCTION`, and KLR / BIR files, are named
errors (commands/stages.py) instead of being read as HLO text.
"""

from __future__ import annotations

import argparse
import importlib

from tilecc.commands import seed_value, step_count
from tilecc.commands.outputs import refuse_stdout
from tilecc.commands.stages import kernel_function_missing, refuse_wrong_stage
from tilecc.errors import TileccError

TRACE_STEPS_HELP = ("kernels: stop tracing with an error after N trace steps (an instruction "
                    "traced, or an iteration of an nl range loop; default: "
                    "TILECC_MAX_TRACE_STEPS, else 1000000)")
HELP = "execute an HLO module on N replicas, or trace + lower + simulate an NKI kernel (file.py:fn)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help="IN.hlo (or - for stdin), or kernel.py:function[GRID]")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an input array by parameter / argument name, or NAME=NUMBER for a "
                        "scalar kernel argument (repeatable)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the .npy outputs")
    parser.add_argument("--save-inputs", metavar="DIR",
                        help="also write the inputs used (random, made by the kernel file's "
                        "make_inputs, or given) as DIR/<name>.npy")
    parser.add_argument("--replicas", type=int, default=None,
                        help="HLO only: number of replicas (default: the module's replica_count)")
    parser.add_argument("--partitions", type=int, default=None,
                        help="HLO only: partitions per replica of an SPMD module (default: the "
                        "module's num_partitions)")
    parser.add_argument("--seed", type=seed_value, default=0,
                        help="seed of the random values (HLO) / of make_inputs (kernel files)")
    parser.add_argument("--check", action="store_true",
                        help="kernel only: compare the outputs with the file's reference()")
    parser.add_argument("--keep-temps", metavar="DIR",
                        help="kernel only: keep the KLR and BIR JSON in DIR")
    parser.add_argument("--max-steps", type=step_count, default=None, metavar="N",
                        help="HLO only: stop with an error after N steps (an instruction on up "
                        "to 1024 elements of one device is a step; default: TILECC_MAX_STEPS, "
                        "else 1000000)")
    parser.add_argument("--max-trace-steps", type=step_count, default=None, metavar="N",
                        help=TRACE_STEPS_HELP)
    add_kernel_arguments(parser)


def add_kernel_arguments(parser: argparse.ArgumentParser) -> None:
    """The kernel-only flags: definedness policy, statistics, simulated profile."""
    parser.add_argument("--uninit", choices=("error", "warn", "ignore"), default="error",
                        help="kernels: undefined data reaching HBM is an error (default), a "
                        "warning, or ignored")
    parser.add_argument("--stats", action="store_true",
                        help="kernels: print instructions per engine, DMA bytes per queue, SBUF / "
                        "PSUM high-water marks and the estimated time")
    parser.add_argument("--profile", metavar="TRACE.json", default=None,
                        help="kernels: write the estimated timeline as a Chrome / Perfetto trace")
    parser.add_argument("--html", metavar="REPORT.html",
                        help="kernels only: write the kernel report page (source, KLR, BIR linked; "
                        "with --check, a picture of the difference from the KLR interpreter)")


def is_kernel_target(target: str) -> bool:
    path, sep, function = target.rpartition(":")
    # a launch grid may follow the function name: kernel.py:fn[2,2]
    return bool(sep) and path.endswith(".py") and function.split("[", 1)[0].isidentifier()


def run(args: argparse.Namespace) -> int:
    refuse_stdout(args.out, "--out")
    refuse_stdout(args.save_inputs, "--save-inputs")
    if is_kernel_target(args.target):
        module_name = "run_kernel"
    else:
        kernel_function_missing(args.target)
        refuse_wrong_stage(args.target, "run")
        module_name = "run_hlo"
        if args.html:
            raise TileccError("--html applies to kernels (kernel.py:fn); draw an HLO module "
                              "with `tilecc hlo-graph`")
        if args.max_trace_steps is not None:
            raise TileccError("--max-trace-steps applies to kernels (kernel.py:fn); an HLO run "
                              "is bounded by --max-steps")
    return int(importlib.import_module(f"tilecc.commands.{module_name}").run(args))
