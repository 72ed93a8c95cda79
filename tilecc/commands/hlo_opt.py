"""`tilecc hlo-opt IN.hlo --passes=NAME[,NAME...] [-o OUT.hlo]`: run HLO passes on a module.

Contract:
- Reads HLO text (`-` = stdin), verifies it, runs the passes in the order given (CLI names
  or the spec's registry names), verifies after every pass, and writes the printed module
  to `-o` (default `-` = stdout) atomically. `--list-passes` prints the registry table.
  `--dump-dir DIR` writes the module before and after each pass; `--dump-format=text,dot,html`
  adds Graphviz DOT and a before / after page per pass (tilecc.viz.dump), the page showing
  the --verify verdict when it ran.
- `--verify[=N]` executes the module before and after the pipeline on N replicas (default:
  the module's replica_count when its header sets one, else 4) with seeded random inputs
  (`--seed`) that cover each dtype's full range and extremes, on the module's
  num_partitions partitions, and reports per output
  "equal" or "mismatch" with the first differing index on stderr. `--oracle=xla` does the
  same on XLA's CPU backend (implies --verify). On a mismatch the output file is NOT
  written (the pipeline's result is suspect; `--dump-dir` keeps it for inspection).
- `--input NAME=FILE.npy` (with --verify) gives a parameter's values instead of random ones,
  by `tilecc run`'s rules -- e.g. the trip count of a while loop, which random values can
  make astronomically long.
- Exit codes: 0 success, 1 user error (bad input, unknown pass, failed verification of
  the IR, oracle failure), 2 a --verify mismatch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from tilecc.commands import seed_value
from tilecc.errors import PassError, TileccError
from tilecc.fileio import read_text, write_text_atomic
from tilecc.hlo.ir import HloModule
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.passes.pass_base import PASS_REGISTRY, build_pipeline

HELP = "run HLO passes (decompose-int-all-reduce, decompose-scalar-reduce) on an HLO text module"

DEFAULT_VERIFY_REPLICAS = 4
_DEFAULT_N = -1  # `--verify` without a value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", nargs="?", help="HLO text file, or - for stdin")
    parser.add_argument("--passes", help="comma-separated pass names, run in this order")
    parser.add_argument("-o", "--output", default="-", help="output file (default: - = stdout)")
    parser.add_argument("--list-passes", action="store_true", help="list the passes and exit")
    parser.add_argument("--dump-dir", help="write the module before and after each pass here")
    parser.add_argument("--dump-format", type=_dump_formats, default=frozenset({"text"}),
                        metavar="text,dot,html", help="with --dump-dir: also write Graphviz DOT "
                        "and a before / after HTML page per pass (text is always written)")
    parser.add_argument("--verify", nargs="?", type=_replica_count, const=_DEFAULT_N,
                        metavar="N", help="execute before and after on N replicas and compare "
                        "(default N: the module's replica_count, else 4); write it as --verify=N")
    parser.add_argument("--oracle", choices=["interpreter", "xla"], default=None,
                        help="what executes the module for --verify (default: interpreter); "
                        "giving it implies --verify")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the --verify inputs")
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


def _replica_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a replica count, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"replica count must be >= 1, got {value}")
    return value


def list_passes() -> str:
    rows = [("order", "name", "alias (spec registry name)", "class")]
    rows += [(str(i.registry_order), i.cli_name, i.spec_name, i.class_name) for i in PASS_REGISTRY]
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    return "".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() + "\n"
                   for r in rows)


def run(args: argparse.Namespace) -> int:
    if args.list_passes:
        sys.stdout.write(list_passes())
        return 0
    if args.input is None:
        raise PassError("missing input file (use - for stdin)")
    if not args.passes:
        raise PassError("missing --passes=NAME[,NAME...]; see --list-passes")
    names = [n.strip() for n in args.passes.split(",") if n.strip()]
    if not names:
        raise PassError(f"--passes={args.passes} names no pass; see --list-passes")
    if args.dump_format != {"text"} and not args.dump_dir:
        raise PassError("--dump-format needs --dump-dir DIR (where the dumps are written)")
    pipeline = build_pipeline(names, dump_dir=Path(args.dump_dir) if args.dump_dir else None)

    path = "<stdin>" if args.input == "-" else args.input
    text = read_text(args.input)
    module = parse_module(text, path)
    verify = args.verify is not None or args.oracle is not None
    if args.inputs and not verify:
        raise PassError("--input gives values for --verify; add --verify or --oracle")
    before_text = print_module(module) if verify else ""
    for name, changed in pipeline.run(module):
        print(f"{name}: {'changed' if changed else 'no change'}", file=sys.stderr)
    out_text = print_module(module)

    equal, verdict = True, None
    if verify:
        explicit = args.verify not in (None, _DEFAULT_N)
        replicas = args.verify if explicit else default_replicas(module)
        oracle = args.oracle or "interpreter"
        equal = verify_equivalence(before_text, out_text, replicas, args.seed, oracle, path,
                                   list(args.inputs))
        verdict = (equal, f"{'equal' if equal else 'MISMATCH'} on {oracle}, {replicas} "
                          f"replica(s), seed {args.seed} (input module vs the pipeline's output)")
    if args.dump_dir and args.dump_format != {"text"}:
        from tilecc.viz.dump import write_pass_dumps
        if (note := write_pass_dumps(Path(args.dump_dir), pipeline, args.dump_format, verdict)):
            print(f"note: {note}", file=sys.stderr)
    if not equal:
        print("verify: MISMATCH; output not written", file=sys.stderr)
        return 2
    write_text_atomic(args.output, out_text)
    return 0


def default_replicas(module: HloModule) -> int:
    """The module's replica_count when its header fixes the device count (replica_count or
    num_partitions written), else DEFAULT_VERIFY_REPLICAS."""
    if "replica_count" in module.header_order or "num_partitions" in module.header_order:
        return module.replica_count
    return DEFAULT_VERIFY_REPLICAS


def verify_equivalence(before_text: str, after_text: str, replicas: int, seed: int,
                       oracle: str, path: str, input_specs: list[str] | None = None) -> bool:
    """Run both module texts on the same seeded inputs (`input_specs`, `NAME=FILE.npy`,
    replace some: tilecc run's rules); report per output; True if all equal."""
    from tilecc.commands.run_hlo import read_inputs
    from tilecc.hlo.random_inputs import random_inputs

    before = parse_module(before_text, path)
    after = parse_module(after_text, path)
    partitions = before.num_partitions
    inputs = random_inputs(before, replicas, seed, partitions)
    for number, array in read_inputs(before, input_specs or [], replicas * partitions).items():
        inputs[number] = array
    if oracle == "xla":
        from tilecc.hlo.interpreter import is_identity_custom_call, refusal_hint
        from tilecc.hlo.xla import XlaJob, run_many_on_xla
        for comp in before.computations:
            for inst in comp.instructions:
                if not is_identity_custom_call(inst) and \
                        "sharding marker" in (hint := refusal_hint(inst)):
                    raise TileccError(f"verify on xla: {inst.name}: XLA CPU cannot run this "
                                      f"module{hint}")
        results = run_many_on_xla([XlaJob("run", before_text, inputs, replicas, partitions),
                                   XlaJob("run", after_text, inputs, replicas, partitions)])
        for result in results:
            if isinstance(result, TileccError):
                if before.header_attributes.get("is_scheduled") == "true":
                    raise TileccError(f"{result} (the module is scheduled, XLA's "
                                      "post-optimization form, which XLA does not compile "
                                      "again; verify a dump from before optimization, or "
                                      "use --oracle=interpreter)") from None
                raise result
        outs_before, outs_after = results
    else:
        from tilecc.hlo.interpreter import evaluate_module
        outs_before = evaluate_module(before, inputs, replicas, partitions)
        outs_after = evaluate_module(after, inputs, replicas, partitions)
    assert isinstance(outs_before, list) and isinstance(outs_after, list)
    print(f"verify on {oracle}: {replicas} replica(s) x {partitions} partition(s), seed {seed}",
          file=sys.stderr)
    if len(outs_before) != len(outs_after):
        print(f"verify: {len(outs_before)} outputs before, {len(outs_after)} after",
              file=sys.stderr)
        return False
    ok = True
    for k, (x, y) in enumerate(zip(outs_before, outs_after)):
        report = compare_outputs(x, y)
        print(f"  output {k}: {report}", file=sys.stderr)
        ok = ok and report == "equal"
    return ok


def compare_outputs(before: np.ndarray, after: np.ndarray) -> str:
    """'equal', or 'mismatch ...' naming the first differing index (axis 0 = device)."""
    if before.dtype != after.dtype or before.shape != after.shape:
        return (f"mismatch: {before.dtype}{list(before.shape)} before, "
                f"{after.dtype}{list(after.shape)} after")
    if before.dtype.kind in "iub":
        same = before == after
    else:  # floats (ml_dtypes ones too): NaN equals NaN, compared as wide values
        wide = np.complex128 if before.dtype.kind == "c" else np.float64
        x, y = before.astype(wide), after.astype(wide)
        same = (x == y) | (np.isnan(x) & np.isnan(y))
    if bool(np.all(same)):
        return "equal"
    index = tuple(int(i) for i in np.argwhere(~same)[0])
    return (f"mismatch at device {index[0]}, index {list(index[1:])}: "
            f"before {before[index]!r}, after {after[index]!r}")
