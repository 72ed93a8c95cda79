"""Long fuzzing campaigns over every command (tilecc/fuzz): `python bench/fuzz.py`.

Prints the counts per command and class and exits 1 if any mutant broke the bad-input
promise (traceback, hang, killed, bad exit code, input modified, partial output); each
violation is listed with its command line and, with --minimize, written shrunk to
--repro-dir. The README's campaign figures come from

    nice -n 10 python bench/fuzz.py --per-command 10000 --seed campaign-5 --jobs 2 --minutes 44

and the held-out check from `--per-command 200 --seed held-out-3 --family held-out`;
`--seed campaign-3 --targets sim --index 240` runs one mutant again.
"""

from __future__ import annotations

import argparse
import base64
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tilecc.fuzz.campaign import run_campaign  # noqa: E402
from tilecc.fuzz.runner import CLASSES, DEFAULT_CPU_LIMIT, DEFAULT_TIME_LIMIT  # noqa: E402
from tilecc.fuzz.targets import TARGETS, available  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-command", type=int, default=1000, help="mutants per command")
    parser.add_argument("--seed", default="campaign-1")
    parser.add_argument("--family", choices=["main", "held-out"], default="main",
                        help="which structured mutators to use")
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated targets")
    parser.add_argument("--jobs", type=int, default=2, help="parallel workers")
    parser.add_argument("--index", type=int, default=None, metavar="I",
                        help="run only mutant I of each command (to reproduce one; with "
                        "--targets, of one command)")
    parser.add_argument("--subprocess", action="store_true",
                        help="a fresh interpreter per mutant instead of the fork server")
    parser.add_argument("--minimize", type=int, default=100, metavar="RUNS",
                        help="runs spent shrinking each violation (0: keep it whole)")
    parser.add_argument("--repro-dir", default="fuzz-repro", help="where shrunk violations go")
    parser.add_argument("--cpu-limit", type=int, default=DEFAULT_CPU_LIMIT,
                        help="CPU seconds per mutant before it counts as a hang")
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop starting mutants after this long (the commands take turns)")
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT,
                        help="wall-clock seconds per mutant before it counts as a hang")
    args = parser.parse_args()
    if not available():
        print("bench/fuzz.py needs a source checkout (examples/ and tests/fixtures/)",
              file=sys.stderr)
        return 1
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    first, count, jobs = (0, args.per_command, args.jobs) if args.index is None else \
        (args.index, args.index + 1, 1)
    report = run_campaign(targets, count, args.seed, args.family, jobs,
                          args.subprocess, args.minimize, args.time_limit,
                          cpu_limit=args.cpu_limit, minutes=args.minutes, first=first)
    width = max(len(t) for t in targets)
    print(f"{'command':<{width}}  mutants  " + "  ".join(CLASSES))
    for target in targets:
        counts = report.counts[target]
        print(f"{target:<{width}}  {report.total(target):7d}  " +
              "  ".join(f"{counts[c]:{len(c)}d}" for c in CLASSES))
    print(f"{report.violation_count()} violations in {report.seconds:.0f} s "
          f"(seed {args.seed}, {args.family} mutators)")
    repro = Path(args.repro_dir)
    for record in report.violations:
        folder = repro / f"{record['target']}-{record['index']}"
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in record["files"].items():
            (folder / name).write_bytes(base64.b64decode(data))
        tail = record["stderr"].strip().splitlines()[-1:] or [""]
        print(f"  {record['class']}: {record['target']} #{record['index']}: tilecc "
              f"{' '.join(record['argv'])}  ({folder}) {tail[0][:200]}")
    if report.failed_workers:
        print(f"{report.failed_workers} worker(s) failed (see the traceback above): the counts "
              "are incomplete")
    return 1 if report.violations or report.failed_workers else 0


if __name__ == "__main__":
    sys.exit(main())
