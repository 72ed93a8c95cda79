"""Seeded random host programs (windows over a few buffers, aliases, allreduces in
straight code, for / while / if bodies, returns, comments): parse -> print -> parse is the
identity, printing is stable, the pass is idempotent, every allreduce ends with a signal
hoisted before the first user statement, and all calls over one buffer share one signal
while different buffers never do."""

from __future__ import annotations

import random

import pytest

from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.printer import print_module

from .conftest import HEADER, synthesize


def random_body(rng: random.Random, buffers: int, depth: int, indent: str) -> list[str]:
    lines: list[str] = []
    for _ in range(rng.randint(1, 5)):
        b = rng.randrange(buffers)
        kind = rng.random()
        if kind < 0.35:
            lines.append(f"{indent}v{b} = pld.tensor.allreduce(v{b}, op=pld.ReduceOp.Sum"
                         f"{', core_num=%d' % rng.randint(1, 4) if rng.random() < 0.3 else ''})")
        elif kind < 0.45:
            lines.append(f"{indent}pld.tensor.allreduce(v{b})  # expression statement")
        elif kind < 0.55:
            lines.append(f"{indent}v{b} = pld.window(buf{b}, [64], dtype=pl.FP32)")
        elif kind < 0.65:
            lines.append(f"{indent}# a comment {rng.randrange(100)}")
            lines.append(f"{indent}t = v{b}")
        elif depth < 2 and kind < 0.75:
            lines.append(f"{indent}for i{depth} in pl.range({rng.randint(1, 4)}):")
            lines += random_body(rng, buffers, depth + 1, indent + "    ")
        elif depth < 2 and kind < 0.85:
            lines.append(f"{indent}if flag:")
            lines += random_body(rng, buffers, depth + 1, indent + "    ")
            if rng.random() < 0.5:
                lines.append(f"{indent}else:")
                lines += random_body(rng, buffers, depth + 1, indent + "    ")
        elif depth < 2 and kind < 0.9:
            lines.append(f"{indent}while flag:")
            lines += random_body(rng, buffers, depth + 1, indent + "    ")
        else:
            lines.append(f"{indent}n = n + {rng.randint(-3, 3)}")
    return lines


def random_program(seed: int) -> tuple[str, int]:
    rng = random.Random(seed)
    buffers = rng.randint(1, 3)
    lines = ["@pl.program", "class R:", "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)",
             "    def host(self, flag: pl.Scalar[pl.BOOL], n: pl.Scalar[pl.INT64]):"]
    for b in range(buffers):
        lines.append(f"        buf{b} = pld.alloc_window_buffer(256)")
        lines.append(f"        v{b} = pld.window(buf{b}, [64], dtype=pl.FP32)")
    lines += random_body(rng, buffers, 0, "        ")
    lines.append(f"        return pld.tensor.allreduce(v{rng.randrange(buffers)})" if rng.random() < 0.5
                 else "        return n")
    return HEADER + "\n".join(lines) + "\n", buffers


def allreduces(body: tuple[ir.Stmt, ...]) -> list[ir.OpCall]:
    out = []
    for stmt in ir.walk_stmts(body):
        for top in ir.stmt_exprs(stmt):
            out += [e for e in ir.walk_expr(top) if isinstance(e, ir.OpCall) and e.op == "pld.tensor.allreduce"]
    return out


@pytest.mark.parametrize("seed", range(120))
def test_random_host_program(seed):
    source, buffers = random_program(seed)
    module = parse_module(source, f"<seed {seed}>")
    printed = print_module(module)
    assert parse_module(printed) == module and print_module(parse_module(printed)) == printed
    result = synthesize(source)          # the pipeline checks print -> parse after the pass
    assert synthesize(print_module(result)) == result
    func = result.programs[0].functions[0]
    calls = allreduces(func.body)
    assert all(len(c.args) == 2 for c in calls)
    hoisted = [s.target.name for s in func.body if isinstance(s, ir.Assign)
               and s.target.name.startswith("__allreduce_signal_") and "_buf_" not in s.target.name
               and "_world_size_" not in s.target.name]
    first_user = next(i for i, s in enumerate(func.body) if not (isinstance(s, ir.Assign)
                                                                and s.target.name.startswith("__allreduce_")))
    assert len(hoisted) * 3 == first_user
    assert {c.args[1].name for c in calls} == set(hoisted)
    # every value of v<b> is a view of buf<b> or an allreduce of v<b>, whatever the control
    # flow (joins of one lineage keep it): one signal per buffer, different buffers never share
    by_buffer: dict[str, set[str]] = {}
    for c in calls:
        by_buffer.setdefault(c.args[0].name, set()).add(c.args[1].name)
    assert all(len(signals) == 1 for signals in by_buffer.values())
    assert len(by_buffer) == len(hoisted) <= buffers
