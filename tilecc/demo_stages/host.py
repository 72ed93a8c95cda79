"""Demo stage: SynthesizeAllReduceSignals on a bundled pypto host program.

Parses examples/host/allreduce_mesh.py, runs the pass, prints the rewritten host
orchestrator, and checks that the implicit allreduce got a hoisted signal, that
print -> parse gives back the same program, that a second run changes nothing, and that
the rewritten program executed on 4 ranks (host runtime, credit-barrier allreduce) gives
every rank numpy's sum of all ranks' inputs and leaves the signal all zero.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

import numpy as np

from tilecc.errors import TileccError
from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.passes import build_pipeline
from tilecc.host.printer import print_function, print_module
from tilecc.host.runtime.interpreter import run_host
from tilecc.host.runtime.world import World

TITLE = "host: SynthesizeAllReduceSignals on a pypto host program"
PROGRAM = Path("host") / "allreduce_mesh.py"


def _check(out: TextIO, ok: bool, what: str) -> bool:
    print(f"  [{'ok' if ok else 'FAILED'}] {what}", file=out)
    return ok


def run_stage(examples: Path, out: TextIO) -> bool:
    path = examples / PROGRAM
    try:
        module = parse_module(path.read_text(encoding="utf-8"), str(path))
        pipeline = build_pipeline(["synthesize-allreduce-signals"], path=str(path))
        result = pipeline.run(module)
    except (OSError, TileccError) as err:
        print(f"  error: {err}", file=out)
        return False
    print(f"  input: {path}", file=out)
    for before, after in zip(module.programs, result.programs):
        for old, new in zip(before.functions, after.functions):
            if old is not new:
                print("\n".join("    " + line for line in print_function(new).splitlines()), file=out)
    calls = [s.value for p in result.programs for f in p.functions for s in ir.walk_stmts(f.body)
             if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "pld.tensor.allreduce"]
    ok = _check(out, bool(calls) and all(len(c.args) == 2 for c in calls),
                f"every host allreduce has an explicit signal ({len(calls)} calls)")
    text = print_module(result)
    ok &= _check(out, parse_module(text, "<printed>") == result, "print -> parse round trip gives the same program")
    ok &= _check(out, build_pipeline(["synthesize-allreduce-signals"]).run(result) is result,
                 "a second run changes nothing (idempotent)")
    return ok and _execute(result, out)


def _execute(module: ir.Module, out: TextIO) -> bool:
    ranks = 4
    inputs = np.random.default_rng(0).standard_normal((ranks, 1, 64)).astype(np.float32)
    outputs = np.zeros_like(inputs)
    world = World(ranks)
    try:
        run_host(module, "MeshAllReduce", "host_orch", ranks, [inputs, outputs], world=world)
    except TileccError as err:
        print(f"  error: {err}", file=out)
        return False
    expected = inputs[0, 0] + inputs[1, 0] + inputs[2, 0] + inputs[3, 0]
    signal = world.buffer_by_name("__allreduce_signal_buf_0", 0)
    return _check(out, bool((outputs[:, 0] == expected).all()) and not signal.any(),
                  f"executed on {ranks} ranks: every rank holds the exact sum, signal back to zero")
