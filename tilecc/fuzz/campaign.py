"""A fuzzing campaign: N mutants per command, run in parallel workers, counted by class.

Contract: `run_campaign(targets, per_command, seed, family, jobs, ...)` makes mutant i of
each target from (seed, target, i) alone (tilecc/fuzz/targets.py), runs it in one of
`jobs` forked workers -- each a ForkServer, or with `subprocess=True` a fresh interpreter
per mutant -- and returns a `Report`: counts per target and class, and every violation
with its command line, the classification evidence and, if `minimize` is set, the
mutated files shrunk to a small reproduction (tilecc/fuzz/minimize.py). A progress line
goes to `progress` (stderr) every `every` mutants per worker. The targets take turns, so a
campaign given `minutes` stops at its deadline with about as many mutants of each.
Mutants `first` .. `per_command - 1` are run (`first` > 0: a part of a campaign, or one
mutant to reproduce).
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import json
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any, TextIO

from tilecc.fuzz.minimize import minimize
from tilecc.fuzz.runner import (DEFAULT_CPU_LIMIT, DEFAULT_MEMORY_LIMIT, DEFAULT_TIME_LIMIT,
                                Case, ForkServer, Outcome, run_subprocess)
from tilecc.fuzz.targets import TARGETS


@dataclasses.dataclass
class Report:
    counts: dict[str, collections.Counter[str]]
    violations: list[dict[str, Any]]
    seconds: float
    failed_workers: int
    """workers that stopped on an error of their own (its traceback is on stderr)"""

    def total(self, target: str) -> int:
        return sum(self.counts[target].values())

    def violation_count(self) -> int:
        return len(self.violations)


def _runner(subprocess: bool, time_limit: float, memory_limit: int,
            cpu_limit: int) -> Callable[[Case], Outcome]:
    if subprocess:
        return lambda case: run_subprocess(case, time_limit, memory_limit, cpu_limit)
    return ForkServer(time_limit, memory_limit, cpu_limit).run


def _work(worker: int, jobs: int, targets: list[str], per_command: int, seed: str, family: str,
          run: Callable[[Case], Outcome], minimize_budget: int, out: TextIO,
          progress: TextIO | None, every: int, deadline: float | None, first: int) -> None:
    done = 0
    # mutant i of every target before mutant i + jobs of any: a campaign stopped at its
    # deadline has run about as many mutants of each command
    for i in range(first + worker, per_command, jobs):
        if deadline is not None and time.monotonic() > deadline:
            return
        for name in targets:
            case, mutated = TARGETS[name].case_at(seed, i, family)
            outcome = run(case)
            record: dict[str, Any] = {"target": name, "index": i, "class": outcome.klass}
            if outcome.violation:
                small = minimize(case, run, outcome.klass, mutated, minimize_budget) \
                    if minimize_budget else case
                record.update(argv=case.argv, returncode=outcome.returncode,
                              stderr=outcome.stderr[-2000:],
                              files={n: base64.b64encode(small.files[n]).decode()
                                     for n in mutated})
            out.write(json.dumps(record) + "\n")
            out.flush()
            done += 1
            if progress is not None and done % every == 0:
                print(f"fuzz worker {worker}: {done} mutants ({i + 1}/{per_command} per command)",
                      file=progress, flush=True)


def run_campaign(targets: list[str], per_command: int, seed: str, family: str = "main",
                 jobs: int = 1, subprocess: bool = False, minimize_budget: int = 0,
                 time_limit: float = DEFAULT_TIME_LIMIT,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT, cpu_limit: int = DEFAULT_CPU_LIMIT,
                 progress: TextIO | None = sys.stderr, every: int = 500,
                 minutes: float | None = None, first: int = 0) -> Report:
    for name in targets:
        TARGETS[name].all_seeds()   # read the fixtures once, before the workers fork
    run = _runner(subprocess, time_limit, memory_limit, cpu_limit)
    start = time.perf_counter()
    deadline = None if minutes is None else time.monotonic() + 60 * minutes
    with tempfile.TemporaryDirectory(prefix="tilecc-campaign-") as tmp:
        logs = [os.path.join(tmp, f"worker{w}.jsonl") for w in range(jobs)]
        pids = []
        for worker, log in enumerate(logs):
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    with open(log, "w") as out:
                        _work(worker, jobs, targets, per_command, seed, family, run,
                              minimize_budget, out, progress, every, deadline, first)
                except BaseException:   # the worker's own failure (Ctrl-C included): shown
                    traceback.print_exc()
                    code = 1
                finally:
                    os._exit(code)
            pids.append(pid)
        failed = 0
        for pid in pids:
            _, status = os.waitpid(pid, 0)
            failed += status != 0
        counts: dict[str, collections.Counter[str]] = {n: collections.Counter() for n in targets}
        violations = []
        for log in logs:
            if not os.path.exists(log):
                continue
            with open(log) as handle:
                for line in handle:
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                    except ValueError:   # a worker stopped mid-line
                        continue
                    counts[record["target"]][record["class"]] += 1
                    if "argv" in record:
                        violations.append(record)
    return Report(counts, violations, time.perf_counter() - start, failed)
