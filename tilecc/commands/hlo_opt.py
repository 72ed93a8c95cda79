"""`tilecc hlo-opt [IN ...] [--passes=NAME[,NAME...]] [-o OUT.hlo]`: run HLO passes, as XLA's
hlo-opt does.

Contract:
- Reads each module (files in order, stdin when none or `-`; HLO text, or HloModuleProto
  `.pb` / `.pbtxt` / StableHLO `.mlir` through jaxlib: commands/hlo_source.py; `--split-input-file`
  cuts text at `// -----` lines), verifies it, runs the passes in the order given (CLI
  names or the spec's registry names; none: the module is printed back, a formatter and
  short -> long converter), verifies after every pass, and writes the printed modules to
  `-o` (default `-` = stdout) atomically, separated by `// -----` lines. The output is
  XLA's long form, or jax's short form with `--print-short`. `--list-passes` prints the
  registry table. `--dump-dir DIR` writes the module before and after each pass (in a
  folder per module when there are several).
- stderr gets one status line per pass (`NAME: changed` / `NAME: no change`; `-v` adds the
  gate's match count and the pass's time), and with `--print-changed` / `--diff` the
  computations a pass changed / a unified diff (commands/hlo_pass_report.py).
- `--dump-format=text,dot,html` (with `--dump-dir`) adds Graphviz DOT and a before / after
  page per pass (tilecc.viz.dump), the page showing the --verify verdict when it ran.
- `--verify[=N]` executes the module before and after the pipeline on N replicas (default:
  the module's replica_count when its header sets one, else 4) with seeded random inputs
  (`--seed`) that cover each dtype's full range and extremes, on the module's
  num_partitions partitions, and reports per output
  "equal" or "mismatch" with the first differing index on stderr, after a progress line
  saying what runs. `--oracle=xla` does the
  same on XLA's CPU backend (implies --verify). On a mismatch the output file is NOT
  written (the pipeline's result is suspect; `--dump-dir` keeps it for inspection).
- `--input NAME=FILE.npy` (with --verify) gives a parameter's values instead of random ones,
  by `tilecc run`'s rules -- e.g. the trip count of a while loop, which random values can
  make astronomically long (when they do, the step-limit error names the parameters that
  reach a while loop: tilecc.hlo.loop_bounds).
- `--max-steps N` bounds each --verify run as `tilecc run --max-steps` does (tilecc.limits).
- `--allow-mixed-precision` gives the verifier XLA's option of that name: a reduce /
  all-reduce whose reducer computes in another precision than the data (bf16 data, f32
  reducer), as XLA's own tests verify such modules.
- Under `mpiexec -n R` every process runs the passes and --verify runs both modules with
  the devices spread over the R processes (commands/hlo_opt_mpi.py): the same verdict
  lines, one process printing and writing.
- Exit codes: 0 success, 1 user error (bad input, unknown pass, failed verification of
  the IR, oracle failure), 2 a --verify mismatch.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from pathlib import Path

from tilecc.commands import seed_value, step_count
from tilecc.commands.hlo_pass_report import PassReport
from tilecc.commands.hlo_source import SEPARATOR, read_hlo_sources
from tilecc.errors import InterpError, PassError
from tilecc.fileio import write_text_atomic
from tilecc.limits import LimitError, raised
from tilecc.hlo.equivalence import check_equivalence, default_replicas
from tilecc.hlo.ir import HloModule
from tilecc.hlo.loop_bounds import loop_bound_parameters
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.short_form import print_short
from tilecc.mpi_launch import under_mpiexec
from tilecc.passes.pass_base import PASS_REGISTRY, build_pipeline

HELP = "run HLO passes (decompose-int-all-reduce, decompose-scalar-reduce) on an HLO text module"

_DEFAULT_N = -1  # `--verify` without a value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # `extend`, so a file that followed a bare --verify (_VerifyCount) keeps its place
    parser.add_argument("input", nargs="*", action="extend", metavar="IN",
                        help="HLO text, HloModuleProto .pb or StableHLO .mlir file(s); "
                        "- or none: stdin")
    parser.add_argument("--passes", help="comma-separated pass names, run in this order "
                        "(none: parse, verify and print the module back)")
    parser.add_argument("-o", "--output", default="-", help="output file (default: - = stdout)")
    parser.add_argument("--split-input-file", action="store_true",
                        help=f"the input holds several modules separated by '{SEPARATOR}' lines")
    parser.add_argument("--print-short", action="store_true",
                        help="print jax's short form (no %%, metadata or stack frames) instead "
                        "of XLA's long form")
    changes = parser.add_mutually_exclusive_group()
    changes.add_argument("--print-changed", action="store_const", const="computations",
                         dest="changes", help="on stderr: the computations each pass changed")
    changes.add_argument("--diff", action="store_const", const="diff", dest="changes",
                         help="on stderr: a unified diff of what each pass changed")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="per pass: the gate's match count and the time it ran")
    parser.add_argument("--list-passes", action="store_true", help="list the passes and exit")
    parser.add_argument("--dump-dir", help="write the module before and after each pass here")
    parser.add_argument("--dump-format", type=_dump_formats, default=frozenset({"text"}),
                        metavar="text,dot,html", help="with --dump-dir: also write Graphviz DOT "
                        "and a before / after HTML page per pass (text is always written)")
    parser.add_argument("--verify", nargs="?", action=_VerifyCount, const=_DEFAULT_N,
                        metavar="N", help="execute before and after on N replicas and compare "
                        "(default N: the module's replica_count, else 4); write it as --verify=N")
    parser.add_argument("--oracle", choices=["interpreter", "xla"], default=None,
                        help="what executes the module for --verify (default: interpreter); "
                        "giving it implies --verify")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the --verify inputs")
    parser.add_argument("--max-steps", type=step_count, default=None, metavar="N",
                        help="for --verify: stop with an error after N steps of each run, as "
                        "tilecc run does (default: TILECC_MAX_STEPS, else 1000000)")
    parser.add_argument("--allow-mixed-precision", action="store_true",
                        help="let the verifier accept a reducer of another precision than its "
                        "data (XLA's verifier option allow_mixed_precision)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        dest="inputs",
                        help="for --verify: a parameter's values (by name or p<i>; shaped like "
                        "the parameter, or with a leading device axis) instead of random ones, "
                        "e.g. a loop bound (repeatable)")


def _dump_formats(text: str) -> frozenset[str]:
    from tilecc.viz.dump import parse_dump_formats
    try:
        return parse_dump_formats(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


class _VerifyCount(argparse.Action):
    """`--verify`, `--verify=N` or `--verify N`. A bare --verify takes the word after it as
    N only when it is a number: `hlo-opt --verify m.hlo` verifies m.hlo, as a user means."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        if not isinstance(values, str):
            setattr(namespace, self.dest, self.const)
            return
        if not values.lstrip("+-").isdigit():
            namespace.input = [*(getattr(namespace, "input", None) or []), values]
            setattr(namespace, self.dest, self.const)
            return
        if int(values) < 1:
            parser.error(f"argument --verify: replica count must be >= 1, got {int(values)}")
        setattr(namespace, self.dest, int(values))


def list_passes() -> str:
    rows = [("order", "name", "alias (spec registry name)", "class")]
    rows += [(str(i.registry_order), i.cli_name, i.spec_name, i.class_name) for i in PASS_REGISTRY]
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    return "".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() + "\n"
                   for r in rows)


def run(args: argparse.Namespace) -> int:
    if under_mpiexec():   # every process runs the passes; --verify spreads the devices
        return int(importlib.import_module("tilecc.commands.hlo_opt_mpi").run(args, run_passes))
    return run_passes(args)


def run_passes(args: argparse.Namespace) -> int:
    """The command in this process (under mpiexec: in each one, hlo_opt_mpi.py)."""
    if args.list_passes:
        sys.stdout.write(list_passes())
        return 0
    names = [n.strip() for n in (args.passes or "").split(",") if n.strip()]
    if args.passes is not None and not names:
        raise PassError(f"--passes={args.passes} names no pass; see --list-passes")
    if args.dump_format != {"text"} and not args.dump_dir:
        raise PassError("--dump-format needs --dump-dir DIR (where the dumps are written)")
    build_pipeline(names)  # an unknown pass name fails before any input is read
    verify = args.verify is not None or args.oracle is not None
    if args.inputs and not verify:
        raise PassError("--input gives values for --verify; add --verify or --oracle")
    form = print_short if args.print_short else print_module
    sources = read_hlo_sources(list(args.input), args.split_input_file)
    outputs = []
    for number, source in enumerate(sources, start=1):
        dump_dir = None if not args.dump_dir else Path(args.dump_dir) if len(sources) == 1 \
            else Path(args.dump_dir) / f"module{number:02d}"
        out_text = optimize_module(args, source.label, source.text, names, dump_dir, form)
        if out_text is None:
            print("verify: MISMATCH; output not written", file=sys.stderr)
            return 2
        outputs.append(out_text)
    write_text_atomic(args.output, f"{SEPARATOR}\n".join(outputs))
    return 0


def _loop_hint(module: HloModule) -> str:
    """Which inputs to give when random ones make a while loop run past the limit."""
    names = loop_bound_parameters(module)
    if not names:
        return ""
    return (f"; a while loop may be bounded by parameter {', '.join(names)} (random inputs "
            f"make it run long): give its value with --input {names[0]}=FILE.npy")


def optimize_module(args: argparse.Namespace, label: str, text: str, names: list[str],
                    dump_dir: Path | None, form: Callable[[HloModule], str]) -> str | None:
    """The module after the passes, printed by `form`; None when --verify found a mismatch."""
    module = parse_module(text, label)
    verify = args.verify is not None or args.oracle is not None
    before = module.clone() if verify else None
    if before is not None:   # sizes too big to run are refused before the passes print
        from tilecc.commands.run_hlo import check_sizes_of
        replicas = args.verify if args.verify not in (None, _DEFAULT_N) else \
            default_replicas(module)
        check_sizes_of(label if args.verify in (None, _DEFAULT_N) else
                       f"{label}: --verify={replicas}", module, replicas * module.num_partitions,
                       args.max_steps)
    report = PassReport(form, args.verbose, args.changes, label)
    pipeline = build_pipeline(names, dump_dir=dump_dir,
                              allow_mixed_precision=args.allow_mixed_precision)
    try:
        for name, changed in pipeline.run(module, report):
            print(report.line(name, changed), file=sys.stderr)
    except LimitError as err:   # a rewrite too large for the "rewrite" bound: name the file
        raise LimitError(f"{label}: {err}") from None
    out_text = print_module(module)
    verdict: tuple[bool, str] | None = None
    if before is not None:
        from tilecc.commands.run_hlo import read_inputs
        explicit = args.verify not in (None, _DEFAULT_N)
        replicas = args.verify if explicit else default_replicas(module)
        oracle = args.oracle or "interpreter"
        spread = importlib.import_module("tilecc.commands.hlo_opt_mpi") if under_mpiexec() else None
        print(f"verify: running {label} before and after the passes on "
              f"{oracle if spread is None else spread.runs_on(oracle)} ...", file=sys.stderr, flush=True)
        given = read_inputs(before, list(args.inputs), replicas * before.num_partitions)
        check = check_equivalence if spread is None else spread.check_equivalence
        try:
            with raised("steps", args.max_steps):
                equal = check(before, module, replicas, args.seed, oracle, given, sys.stderr)
        except LimitError as err:   # name the module's file, and the loop's bound
            raise LimitError(f"{label}: {err}{_loop_hint(before)}") from None
        except InterpError as err:
            raise InterpError(f"{label}: {err}") from None
        verdict = (equal, f"{'equal' if equal else 'MISMATCH'} on {oracle}, {replicas} "
                          f"replica(s), seed {args.seed} (input module vs the pipeline's output)")
    if dump_dir is not None and args.dump_format != {"text"}:
        from tilecc.viz.dump import write_pass_dumps
        if (note := write_pass_dumps(dump_dir, pipeline, args.dump_format, verdict)):
            print(f"note: {note}", file=sys.stderr)
    if verdict is not None and not verdict[0]:
        return None
    return out_text if form is print_module else form(module)

