"""Interpreter speed against XLA CPU executing the same module (compile time excluded).

Cases: 8 replicas, s32[1024,1024] per replica: a full reduce (add), an all-reduce (add, all
replicas) and an all-reduce over pairs {{0,1},{2,3},...}; a while loop of 16 iterations whose
body reduces rows, all-reduces them and mixes them back into the s32[256,1024] state (8
replicas); plus the realistic fixtures mlp_train_step.spmd.hlo, psum_max.spmd.hlo and
collectives_mix.spmd.hlo in their own replica x partition configuration.

Method: every case is compiled once on both sides (the interpreter's `compile_module`, one
XLA executable kept by the oracle's child), then ROUNDS rounds interleave the two -- in each
round REPEATS runs of ours, then REPEATS runs of XLA's, case after case -- so load from other
processes hits both alike. A figure is the best over all runs: wall time, and process CPU
time (XLA's counts all its threads). ratio = interpreter / XLA, target <= 1.2x; "evaluate" is
`evaluate_module` (compile included) for reference. Run: .venv/bin/python bench/interpreter.py

Where the time goes (cProfile, per-step timing of the compiled programs, page-fault counts
with getrusage, then the change):
- while x16: the steps summed to half of a run's time. Each trip allocated two fresh 8 MB
  arrays (x * 3, then the xor): 24 MB of live buffers at different addresses per trip, out
  of the shared L3 cache (plain numpy at load 9, fresh arrays vs in place: 37 vs 12 ms, 16
  trips). Now the interpreter empties each slot at its last use and takes a callee's
  argument list over as its slot table, the while step hands its state to the body when
  every lane runs, and an elementwise op writes into an operand no one else references
  (values.dead_array, CPython's reference count): the state stays in one buffer, 28 -> 13
  ms of CPU. What remains per trip: the xor with the row sums broadcast along the last
  axis (numpy's per-row loop, about 0.15 us per row of 1024; copying the broadcast into a
  cache-sized block first measured no better once the state stayed in cache), the
  multiply, the row reduce. Fusing the multiply and the xor over cache-sized blocks
  measured within noise of the in-place pair on this 32 MB-L3 machine, so it is not done.
  XLA's wall time is under its CPU time (two threads): its wall ratio stays above 1.2x.
- all-reduce over pairs: 40% of the time was page faults of the fresh 32 MB result (glibc
  maps an allocation that large anew each time). The step now recycles its previous result
  once that is dead (values.Recycler), and reduces in blocks of 256 KiB per member, copying
  each block of sums to the other member while it is in cache (7.6 -> 3.2 ms of CPU).
- mlp_train_step: ~100 instructions on arrays of a few hundred elements, so numpy's cost
  per call; a float op flushed both operands and its result (3 numpy calls each of ~6).
  Operands known to hold no subnormal (results of float ops, dot, constants, moves of
  them: interp/flushed.py) are no longer flushed again.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tilecc.hlo.interpreter import CompiledModule, compile_module, evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import XlaJob, XlaSession

ROUNDS = 7
REPEATS = 5
ROOT = Path(__file__).resolve().parents[1]
ADD = "add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT c = s32[] add(a, b)\n}\n"

REDUCE = f"""HloModule reduce_s32, replica_count=8
{ADD}
ENTRY e {{
  p = s32[1024,1024] parameter(0)
  zero = s32[] constant(0)
  ROOT r = s32[] reduce(p, zero), dimensions={{0,1}}, to_apply=add
}}
"""

ALL_REDUCE = f"""HloModule all_reduce_s32, replica_count=8
{ADD}
ENTRY e {{
  p = s32[1024,1024] parameter(0)
  ROOT r = s32[1024,1024] all-reduce(p), replica_groups={{}}, to_apply=add
}}
"""

PAIRS = ALL_REDUCE.replace("replica_groups={}", "replica_groups={{0,1},{2,3},{4,5},{6,7}}")

WHILE_REDUCE = f"""HloModule while_reduce_s32, replica_count=8
{ADD}
cond {{
  p = (s32[], s32[256,1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(16)
  ROOT lt = pred[] compare(i, n), direction=LT
}}

body {{
  p = (s32[], s32[256,1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = s32[256,1024] get-tuple-element(p), index=1
  zero = s32[] constant(0)
  rows = s32[256] reduce(x, zero), dimensions={{1}}, to_apply=add
  summed = s32[256] all-reduce(rows), replica_groups={{{{0,1,2,3}},{{4,5,6,7}}}}, to_apply=add
  spread = s32[256,1024] broadcast(summed), dimensions={{0}}
  three = s32[] constant(3)
  threes = s32[256,1024] broadcast(three), dimensions={{}}
  scaled = s32[256,1024] multiply(x, threes)
  y = s32[256,1024] xor(scaled, spread)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], s32[256,1024]) tuple(next, y)
}}

ENTRY e {{
  x = s32[256,1024] parameter(0)
  zero = s32[] constant(0)
  start = (s32[], s32[256,1024]) tuple(zero, x)
  loop = (s32[], s32[256,1024]) while(start), condition=cond, body=body
  ROOT r = s32[256,1024] get-tuple-element(loop), index=1
}}
"""


@dataclass
class Case:
    name: str
    text: str
    replicas: int
    partitions: int
    inputs: list[np.ndarray] = field(default_factory=list)
    compiled: CompiledModule | None = None
    ours: list[float] = field(default_factory=lambda: [float("inf")] * 2)
    """best [wall, cpu] seconds"""
    theirs: list[float] = field(default_factory=lambda: [float("inf")] * 2)
    evaluate: float = float("inf")


def cases() -> list[Case]:
    found = [Case("reduce s32[1024,1024] -> s32[]", REDUCE, 8, 1),
             Case("all-reduce s32[1024,1024], 8 replicas", ALL_REDUCE, 8, 1),
             Case("all-reduce s32[1024,1024], pairs", PAIRS, 8, 1),
             Case("while x16: reduce + all-reduce s32[256,1024]", WHILE_REDUCE, 8, 1)]
    fixtures = ROOT / "tests" / "fixtures" / "hlo"
    for name in ("mlp_train_step.spmd.hlo", "psum_max.spmd.hlo", "collectives_mix.spmd.hlo"):
        path = fixtures / name
        if path.exists():
            text = path.read_text()
            module = parse_module(text, str(path))
            found.append(Case(name, text, module.replica_count, module.num_partitions))
    return found


def time_ours(case: Case) -> None:
    assert case.compiled is not None
    gc.collect()
    for _ in range(REPEATS):
        start, start_cpu = time.perf_counter(), time.process_time()
        case.compiled(case.inputs)
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        case.ours = [min(case.ours[0], wall), min(case.ours[1], cpu)]
    module = case.compiled.module
    start = time.perf_counter()
    evaluate_module(module, case.inputs, case.replicas, case.partitions)
    case.evaluate = min(case.evaluate, time.perf_counter() - start)


def time_theirs(session: XlaSession, case: Case) -> None:
    result = session.submit(XlaJob("time", case.text, case.inputs, case.replicas,
                                   case.partitions, REPEATS))
    if isinstance(result, Exception):
        raise result
    wall, cpu = (float(v) for v in result[0])
    case.theirs = [min(case.theirs[0], wall), min(case.theirs[1], cpu)]


def main() -> None:
    all_cases = cases()
    for case in all_cases:
        module = parse_module(case.text)
        case.inputs = random_inputs(module, case.replicas, 0, case.partitions)
        case.compiled = compile_module(module, case.replicas, case.partitions)
        case.compiled(case.inputs)  # compile every computation before timing
    with XlaSession(devices=max(c.replicas * c.partitions for c in all_cases)) as session:
        for _ in range(ROUNDS):
            for case in all_cases:
                time_ours(case)
                time_theirs(session, case)
    print(f"best of {ROUNDS} x {REPEATS} interleaved runs; ratio = interpreter / XLA CPU")
    print(f"{'case':46} {'dev':>3} {'ours wall':>10} {'XLA wall':>10} {'ratio':>6} "
          f"{'ours CPU':>10} {'XLA CPU':>10} {'ratio':>6} {'evaluate':>10}")
    for case in all_cases:
        (ow, oc), (tw, tc) = case.ours, case.theirs
        print(f"{case.name:46} {case.replicas * case.partitions:>3} {ow * 1e3:>7.3f} ms "
              f"{tw * 1e3:>7.3f} ms {ow / tw:>5.2f}x {oc * 1e3:>7.3f} ms {tc * 1e3:>7.3f} ms "
              f"{oc / tc:>5.2f}x {case.evaluate * 1e3:>7.3f} ms")


if __name__ == "__main__":
    main()
