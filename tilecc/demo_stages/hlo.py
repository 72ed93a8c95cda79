"""Demo stage: spec 000's two HLO passes on the bundled jax dumps in examples/hlo/*.hlo.

For each module: parse, verify, list what each pass's gate matches, print the module before
and after DecomposeIntAllReduce + DecomposeScalarReduce (verified after each pass), and
check on the interpreter that every output is unchanged on seeded random inputs (which
include each integer type's extremes, so the int32 psum wraps around). The device count is
the module's (replica_count x num_partitions), or 4 replicas when its header sets neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from tilecc.errors import TileccError
from tilecc.hlo.equivalence import compare_outputs, default_replicas
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.passes.pass_base import PASS_REGISTRY, OpExpanderPass, PassPipeline

TITLE = "HLO: DecomposeIntAllReduce (#88) and DecomposeScalarReduce (#74) on a jax dump"
SEED = 0


def run_stage(examples: Path, out: TextIO) -> bool:
    paths = sorted((examples / "hlo").glob("*.hlo"))
    if not paths:
        print(f"no HLO modules under {examples / 'hlo'}", file=out)
        return False
    ok = True
    for path in paths:
        try:
            ok = _demo_module(path, out) and ok
        except TileccError as err:
            print(f"{path.name}: error: {err}", file=out)
            ok = False
    return ok


def _demo_module(path: Path, out: TextIO) -> bool:
    text = path.read_text(encoding="utf-8")
    module = parse_module(text, str(path))
    before = module.clone()
    passes = [info.create() for info in PASS_REGISTRY]
    print(f"-- {path.name}: {module.instruction_count()} instructions", file=out)
    for hlo_pass in passes:
        assert isinstance(hlo_pass, OpExpanderPass)
        found = hlo_pass.matches(module)
        names = ", ".join(f"{i.name} ({i.shape.to_text()} {i.opcode.mnemonic})" for i in found)
        print(f"   {hlo_pass.name} matches: {names or 'nothing'}", file=out)
    print("-- before:", file=out)
    out.write(print_module(module))
    results = PassPipeline(passes, verify=True).run(module)
    print("-- after " + ", ".join(f"{name} ({'changed' if changed else 'no change'})"
                                  for name, changed in results) + ":", file=out)
    out.write(print_module(module))

    replicas, partitions = default_replicas(before), before.num_partitions
    inputs = random_inputs(before, replicas, SEED, partitions)
    expected = evaluate_module(before, inputs, replicas, partitions)
    actual = evaluate_module(module, inputs, replicas, partitions)
    print(f"-- interpreter, {replicas} replica(s) x {partitions} partition(s), seed {SEED}:",
          file=out)
    ok = len(expected) == len(actual)
    for k, (x, y) in enumerate(zip(expected, actual)):
        report = compare_outputs(x, y)
        print(f"   output {k} {x.dtype}{list(x.shape[1:])}: {report}; "
              f"device 0 value {x.reshape(len(x), -1)[0][:4].tolist()}", file=out)
        ok = ok and report == "equal"
    return ok
