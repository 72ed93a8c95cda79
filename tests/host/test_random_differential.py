"""Seeded random host programs run twice on 2 and 3 ranks: as written (the signal-free
reference collective) and after SynthesizeAllReduceSignals (synthesized signals, the
credit-barrier allreduce). Buffers are filled per rank with distinct values (negative ones
included); allreduces of every op and core_num sit in straight code, pl.range and while
loops, if / else branches, behind aliases and views, as expression statements and in returns.
Every window of every rank must hold bit-identical values at the end, and every
synthesized signal must be all zero again."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tilecc.host.parser import parse_module
from tilecc.host.passes.synthesize_allreduce_signals import SynthesizeAllReduceSignals
from tilecc.host.runtime.interpreter import run_host
from tilecc.host.runtime.world import World

from .conftest import HEADER

N = 6
OPS = ("Sum", "Max", "Min", "Prod")
PASS = SynthesizeAllReduceSignals()


def random_statements(rng: random.Random, buffers: int, depth: int, indent: str) -> list[str]:
    lines: list[str] = []
    for _ in range(rng.randint(1, 4)):
        b = rng.randrange(buffers)
        kind = rng.random()
        op = rng.choice(OPS)
        cores = f", core_num={rng.randint(1, 3)}" if rng.random() < 0.3 else ""
        if kind < 0.3:
            lines.append(f"{indent}w{b} = pld.tensor.allreduce(w{b}, op=pld.ReduceOp.{op}{cores})")
        elif kind < 0.4:
            lines.append(f"{indent}pld.tensor.allreduce(w{b}, op=pld.ReduceOp.{op})")
        elif kind < 0.5:
            lines.append(f"{indent}alias = w{b}")
            lines.append(f"{indent}alias = pld.tensor.allreduce(alias, op=pld.ReduceOp.{op}{cores})")
        elif kind < 0.6:
            lines.append(f"{indent}w{b} = pld.window(buf{b}, [{N}], dtype=pl.FP32)")
        elif kind < 0.75:
            lines.append(f"{indent}for r in pl.range(pld.world_size()):")
            lines.append(f"{indent}    self.bump(w{b}, {rng.randint(-3, 3)}.5, device=r)")
        elif depth < 2 and kind < 0.82:
            lines.append(f"{indent}for i{depth} in pl.range({rng.randint(0, 3)}):")
            lines += random_statements(rng, buffers, depth + 1, indent + "    ")
        elif depth < 2 and kind < 0.88:
            lines.append(f"{indent}j{depth} = 0")
            lines.append(f"{indent}while j{depth} < {rng.randint(0, 2)}:")
            lines += random_statements(rng, buffers, depth + 1, indent + "    ")
            lines.append(f"{indent}    j{depth} = j{depth} + 1")
        elif depth < 2:
            lines.append(f"{indent}if {'flag' if rng.random() < 0.5 else 'not flag'}:")
            lines += random_statements(rng, buffers, depth + 1, indent + "    ")
            if rng.random() < 0.5:
                lines.append(f"{indent}else:")
                lines += random_statements(rng, buffers, depth + 1, indent + "    ")
        else:
            lines.append(f"{indent}k = k + 1")
    return lines


def random_program(seed: int) -> tuple[str, int]:
    rng = random.Random(seed)
    buffers = rng.randint(1, 3)
    lines = [
        "@pl.program", "class R:",
        "    @pl.function(type=pl.FunctionType.Orchestration)",
        f"    def bump(self, win: pl.InOut[pld.DistributedTensor[[{N}], pl.FP32]], v: pl.Scalar[pl.FP32]):",
        f"        return pl.store(pl.add(pl.load(win, [0], [{N}]), v), [0], win)",
        "",
        "    @pl.function(type=pl.FunctionType.Orchestration)",
        f"    def seed(self, win: pl.InOut[pld.DistributedTensor[[{N}], pl.FP32]], x: pl.Tensor[[{N}], pl.FP32]):",
        f"        return pl.store(pl.load(x, [0], [{N}]), [0], win)",
        "",
        "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)",
        "    def host(self, flag: pl.Scalar[pl.BOOL], x: pl.Tensor[[4, 3, 6], pl.FP32]):",
        "        k = 0",
    ]
    for b in range(buffers):
        lines += [f"        buf{b} = pld.alloc_window_buffer({N} * 4)",
                  f"        w{b} = pld.window(buf{b}, [{N}], dtype=pl.FP32)",
                  "        for r in pl.range(pld.world_size()):",
                  f"            self.seed(w{b}, x[r, {b}], device=r)"]
    lines += random_statements(rng, buffers, 0, "        ")
    if rng.random() < 0.5:
        lines.append(f"        return pld.tensor.allreduce(w0, op=pld.ReduceOp.{rng.choice(OPS)})")
    else:
        lines.append("        return w0")
    return HEADER + "\n".join(lines) + "\n", buffers


def final_windows(module, ranks: int, flag: bool, reference: bool) -> list[np.ndarray]:
    x = ((np.arange(4 * 3 * N, dtype=np.float32).reshape(4, 3, N) % 7) - 3) * 0.75
    world = World(ranks, timeout=10)
    run_host(module, "R", "host", ranks, [flag, x], world=world, reference_collectives=reference)
    names = [n for n in world.buffer_names() if not n.startswith("__allreduce_signal_buf_")]
    for name in world.buffer_names():
        if name.startswith("__allreduce_signal_buf_"):
            assert all(not world.buffer_by_name(name, r).view(np.int32).any() for r in range(ranks))
    return [world.buffer_by_name(n, r).view(np.float32).copy() for n in names for r in range(ranks)]


@pytest.mark.parametrize("seed", range(60))
def test_random_program_as_written_and_after_the_pass_compute_the_same(seed):
    source, _ = random_program(seed)
    before = parse_module(source)
    after = PASS.run_module(before)
    for ranks, flag in ((2, seed % 2 == 0), (3, seed % 2 == 1)):
        expected = final_windows(before, ranks, flag, reference=True)
        actual = final_windows(after, ranks, flag, reference=False)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            np.testing.assert_array_equal(a, e)
