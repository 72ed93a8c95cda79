"""Interpreter speed against XLA CPU executing the same module (compile time excluded).

Cases: 8 replicas, s32[1024,1024] per replica: a full reduce (add), an all-reduce (add, all
replicas) and an all-reduce over pairs {{0,1},{2,3},...}; plus the realistic fixtures
mlp_train_step.spmd.hlo and psum_max.spmd.hlo run as their device count. Each figure is the
best of several runs, measured in this run on this machine; ratio = interpreter / XLA
(target <= 2x). Run: .venv/bin/python bench/interpreter.py
"""

from __future__ import annotations

import time
from pathlib import Path

from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import time_on_xla

REPEATS = 15
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


def cases() -> list[tuple[str, str, int]]:
    fixtures = ROOT / "tests" / "fixtures" / "hlo"
    found = [("reduce s32[1024,1024] -> s32[]", REDUCE, 8),
             ("all-reduce s32[1024,1024], 8 replicas", ALL_REDUCE, 8),
             ("all-reduce s32[1024,1024], pairs", PAIRS, 8)]
    for name in ("mlp_train_step.spmd.hlo", "psum_max.spmd.hlo"):
        path = fixtures / name
        if path.exists():
            text = path.read_text()
            module = parse_module(text, str(path))
            found.append((name, text, module.replica_count * module.num_partitions))
    return found


def time_interpreter(text: str, replicas: int) -> float:
    module = parse_module(text)
    inputs = random_inputs(module, replicas, seed=0)
    best = float("inf")
    for _ in range(REPEATS + 1):
        start = time.perf_counter()
        evaluate_module(module, inputs, replicas)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    print(f"{'case':42} {'replicas':>8} {'interpreter':>12} {'XLA CPU':>10} {'ratio':>7}")
    for name, text, replicas in cases():
        ours = time_interpreter(text, replicas)
        inputs = random_inputs(parse_module(text), replicas, seed=0)
        theirs = time_on_xla(text, inputs, replicas, repeats=REPEATS)
        print(f"{name:42} {replicas:>8} {ours * 1e3:>9.2f} ms {theirs * 1e3:>7.2f} ms "
              f"{ours / theirs:>6.2f}x")


if __name__ == "__main__":
    main()
