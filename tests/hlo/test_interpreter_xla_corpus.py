"""Interpreter == XLA CPU on every module of XLA's test corpus (../shared/xla-hlo-tests, not
part of the package) that XLA CPU runs.

Every module XLA's parser accepts is read and verified by tilecc (XLA's mixed-precision
option on, as XLA's tests use it) and given seeded random inputs on the device counts its
collectives name (tilecc.hlo.device_count: the pass tests write groups for more devices than
their headers set): finite floats clipped to [-1, 1] (sums never overflow part-way, so the
result does not depend on the summation order), the integers of parameters that may bound a
loop in [0, 3] (random_inputs.loop_safe). The interpreter runs it, then XLA CPU does, many
modules per compile (xla_batch; one XLA child per test process, and a fresh one for each
module with an rng, whose keys depend on the child's past). Outputs must be equal:
integers and pred exactly, floats to rtol 2e-6 / atol 1e-6 (the other oracle tests' bound),
NaN where XLA has NaN.

What is not compared, and why -- each a computed verdict or a listed line with its reason:
- XLA CPU refuses the module (compile or run error): computed, counted;
- tilecc's verifier refuses it: XLA must refuse it too (checked, computed);
- inputs of more than MAX_INPUT_ELEMENTS elements: computed (the suite's time budget);
- an entry parameter with an unbounded dynamic dimension `?`: computed (no array has it);
- host transfers: computed, the reason per opcode in HOST_TRANSFERS (infeed / outfeed: XLA
  CPU waits for a host; send / recv: jaxlib 0.10.2 does not run them; the interpreter has
  none of them); a token entry parameter alone is no reason: it gets an empty array;
- collectives only with TILECC_XLA_CORPUS_COLLECTIVES=0 (see WITH_COLLECTIVES): computed;
- an elided constant `{...}`: computed (ELIDED says why XLA's value is no reference);
- XLA_ABORTS: XLA CPU's process dies or does not answer within its 60 s, or refuses a loop
  that never ends only after the interpreter ran it to its step limit (listed with the
  measured cause: a dead child costs a restart, a hang a minute, so these are not tried);
  TOO_SLOW: the interpreter needs more than 2 s of CPU (listed, measured);
- BEYOND_THE_STEP_LIMIT, INTERPRETER_GAPS, FULL_RUN_GAPS: XLA runs them, the interpreter
  does not or differs, listed with why; a listed module that starts agreeing fails the
  test (take it off the list).
Shards are parametrized (SHARDS) so pytest-xdist spreads them. By default every module is
tried (STRIDE 1), collectives included; TILECC_XLA_CORPUS_STRIDE=8 tries every eighth and
TILECC_XLA_CORPUS_COLLECTIVES=0 leaves collectives out, for a quicker run. Measured
(jaxlib 0.10.2, `-n 2`, an idle 2-core machine): the whole run takes 1 min 20 s of wall
time (8 min 13 s on the same machine running about ten other jobs, load average 18-20).
"""

from __future__ import annotations

import functools
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tilecc.errors import OracleError, TileccError
from tilecc.hlo.device_count import devices_needed
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.ir import HloModule
from tilecc.hlo.opcodes import COLLECTIVES, HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.random_inputs import loop_safe, random_value
from tilecc.hlo.types import UNBOUNDED, Shape
from tilecc.hlo.verifier import verify_module
from tilecc.limits import LimitError
from xla_batch import clipped, close, run_batched
from xla_corpus_lists import (BEYOND_THE_STEP_LIMIT, FULL_RUN_GAPS, INTERPRETER_GAPS,
                               TOO_SLOW, XLA_ABORTS)

pytestmark = pytest.mark.oracle

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "xla-hlo-tests"
SHARDS = 16
"""Every SHARDS-th module of the tried ones goes to one shard: neighbouring modules come from
one XLA test file and cost alike (a file of collectives, each run alone), so interleaving
spreads the costly files over every shard, and 16 shards keep two workers busy to the end."""
STRIDE = int(os.environ.get("TILECC_XLA_CORPUS_STRIDE", "1"))
"""Every STRIDE-th corpus module is tried (1, the default: all of them)."""
BATCH = 40
MAX_INPUT_ELEMENTS = int(os.environ.get("TILECC_XLA_CORPUS_MAX_ELEMENTS", 1 << 16))
"""Modules with larger inputs are left out (the suite's time budget); raise it to run them."""
XLA_DEVICES = 256  # the most any corpus module's collectives name (one child for all)
STEPS_FOR_BEYOND = 200_000
_SEND_RECV = ("send / recv: not run by XLA CPU through jaxlib 0.10.2 (measured on the "
              "corpus' 23: a device-to-device pair kills the process in the HLO -> StableHLO "
              "conversion, a cross-partition one is refused by the SPMD partitioner (a "
              "side-effect without sharding), the others at parse or compile); the "
              "interpreter has no send / recv step")
HOST_TRANSFERS = {
    HloOpcode.INFEED: "infeed: XLA CPU waits for the host to enqueue the data, which nothing "
                      "here does (measured: no answer, or a Check failure on the infeed's "
                      "sharding); the interpreter has no infeed step",
    HloOpcode.OUTFEED: "outfeed: XLA CPU waits for the host to dequeue the data, which "
                       "nothing here does (measured: no answer, or a Check failure on the "
                       "outfeed's sharding); the interpreter has no outfeed step",
    HloOpcode.SEND: _SEND_RECV, HloOpcode.SEND_DONE: _SEND_RECV,
    HloOpcode.RECV: _SEND_RECV, HloOpcode.RECV_DONE: _SEND_RECV,
}
"""Why a module with host transfers is not compared, per opcode (each tried on XLA CPU once,
with a 15 s timeout, on jaxlib 0.10.2)."""
WITH_COLLECTIVES = os.environ.get("TILECC_XLA_CORPUS_COLLECTIVES", "1") != "0"
"""Modules with collectives are tried unless TILECC_XLA_CORPUS_COLLECTIVES=0. XLA CPU's
collectives wait for every device; each such module runs alone (xla_batch), so one whose
devices do not all arrive would hang only itself (none in the corpus does: measured)."""
REPORT = os.environ.get("TILECC_XLA_CORPUS_REPORT")
"""A file to which each shard appends its verdict per module (JSON lines), for measuring."""

ELIDED = ("an elided constant {...}: XLA's parser fills it from a process-wide counter "
          "(bit patterns 0, 1, 2, ... continuing over every such constant it has read), so "
          "its value depends on what the process parsed before")


def _count(shape: Shape) -> int:
    return sum(_count(s) for s in shape.tuple_shapes) if shape.is_tuple else \
        shape.element_count()


def inputs_for(module: HloModule, devices: int) -> list[Any]:
    """Seeded random inputs (see the module docstring)."""
    assert module.entry is not None
    rng = np.random.default_rng(0)
    values = [random_value(p.shape, devices, rng, p.name) for p in module.entry.parameters]
    return loop_safe(module, [clipped(v) for v in values])


@functools.cache
def _session() -> Any:
    from tilecc.hlo.xla import XlaSession
    return XlaSession(XLA_DEVICES, timeout=60)


def _interpret(name: str, module: HloModule, inputs: list[Any], replicas: int,
               partitions: int) -> list[np.ndarray] | str:
    limit = STEPS_FOR_BEYOND if name in BEYOND_THE_STEP_LIMIT else None
    try:
        return evaluate_module(module, inputs, replicas, partitions, limit)
    except LimitError as err:
        return f"step limit: {err}" if "HLO steps" in str(err) else f"refused: {err}"
    except TileccError as err:
        return f"refused: {err}"


def run_shard(shard: int) -> dict[str, tuple[str, str]]:
    """file -> (verdict, detail) for the shard's modules; verdicts: agree, differ,
    interp-fails, no-inputs, xla-refuses, both-refuse, tilecc-refuses (XLA runs it), big,
    elided, dynamic, collective, host-transfer, listed."""
    manifest = json.loads((CORPUS / "manifest.json").read_text())["modules"]
    verdicts: dict[str, tuple[str, str]] = {}
    items, got, refused = [], {}, []
    seconds: dict[str, float] = {}  # the interpreter's CPU time per module, for REPORT
    for entry in manifest[::STRIDE][shard::SHARDS]:
        name = entry["file"].removeprefix("modules/")
        if entry["xla_verdict"] != "accept":
            continue
        if name in XLA_ABORTS or name in TOO_SLOW:
            verdicts[name] = ("listed", XLA_ABORTS.get(name) or TOO_SLOW[name])
            continue
        text = (CORPUS / entry["file"]).read_text(encoding="utf-8")
        module = parse_module(text)
        assert module.entry is not None
        if any(UNBOUNDED in p.shape.dims for p in module.entry.parameters if p.shape.is_array):
            verdicts[name] = ("dynamic", "an entry parameter with an unbounded dynamic "
                                         "dimension (?): no input array has that shape")
            continue
        try:
            verify_module(module, allow_mixed_precision=True)
        except TileccError as err:
            refused.append((name, module, str(err)))
            continue
        assert module.entry is not None
        if any(inst.literal_text == "{...}" for comp in module.computations
               for inst in comp.instructions):
            verdicts[name] = ("elided", ELIDED)
            continue
        transfers = {HOST_TRANSFERS[inst.opcode] for comp in module.computations
                     for inst in comp.instructions if inst.opcode in HOST_TRANSFERS}
        if transfers:
            verdicts[name] = ("host-transfer", "; ".join(sorted(transfers)))
            continue
        if not WITH_COLLECTIVES and any(inst.opcode in COLLECTIVES for comp in
                                        module.computations for inst in comp.instructions):
            verdicts[name] = ("collective", "collectives left out by "
                                            "TILECC_XLA_CORPUS_COLLECTIVES=0")
            continue
        if sum(_count(p.shape) for p in module.entry.parameters) > MAX_INPUT_ELEMENTS:
            verdicts[name] = ("big", f"inputs of more than {MAX_INPUT_ELEMENTS} elements")
            continue
        replicas, partitions = devices_needed(module)
        try:
            inputs = inputs_for(module, replicas * partitions)
        except TileccError as err:
            verdicts[name] = ("no-inputs", str(err))
            continue
        start = time.process_time()
        got[name] = _interpret(name, module, inputs, replicas, partitions)
        seconds[name] = time.process_time() - start
        items.append((name, module, inputs, replicas, partitions))
    session = _session()
    from tilecc.hlo.xla import XlaJob
    for name, module, why in refused:  # XLA must refuse them too
        replicas, partitions = module.replica_count, module.num_partitions
        try:
            inputs = inputs_for(module, replicas * partitions)
        except TileccError as err:
            verdicts[name] = ("no-inputs", f"{why}; {err}")
            continue
        want = session.submit(XlaJob("run", print_module(module), inputs, replicas, partitions))
        verdicts[name] = ("both-refuse", why) if isinstance(want, OracleError) \
            else ("tilecc-refuses", why)
    for name, want in run_batched(session, items, BATCH).items():
        verdicts[name] = _verdict(name, got[name], want)
    if REPORT:
        with open(REPORT, "a") as out:
            for name, (verdict, detail) in sorted(verdicts.items()):
                out.write(json.dumps({"name": name, "verdict": verdict, "detail": detail[:300],
                                      "interp_s": round(seconds.get(name, 0.0), 3)}) + "\n")
    return verdicts


def _verdict(name: str, got: list[np.ndarray] | str,
             want: list[np.ndarray] | OracleError) -> tuple[str, str]:
    if isinstance(want, OracleError):
        return "xla-refuses", str(want)
    if isinstance(got, str):
        return "interp-fails", got
    if len(got) == len(want) and all(close(g, w) for g, w in zip(got, want)):
        return "agree", ""
    wrong = [f"out{k} {g.dtype}{g.shape} vs XLA {w.dtype}{w.shape}"
             for k, (g, w) in enumerate(zip(got, want)) if not close(g, w)]
    return "differ", "; ".join(wrong) or f"{len(got)} outputs, XLA {len(want)}"


@pytest.mark.skipif(not (CORPUS / "manifest.json").exists(),
                    reason=f"XLA's test corpus is not beside this checkout ({CORPUS}); it is "
                           "data for conformance runs, not part of the package")
@pytest.mark.parametrize("shard", range(SHARDS))
def test_interpreter_equals_xla_on_the_corpus(shard: int) -> None:
    verdicts = run_shard(shard)
    wrong = []
    for name, (verdict, detail) in sorted(verdicts.items()):
        listed = BEYOND_THE_STEP_LIMIT.get(name) or INTERPRETER_GAPS.get(name) or \
            FULL_RUN_GAPS.get(name)
        if verdict in ("differ", "interp-fails", "tilecc-refuses", "no-inputs") and not listed:
            wrong.append(f"{name}: {verdict}: {detail}")
        elif listed and verdict == "agree":
            wrong.append(f"{name}: now agrees with XLA: take it off its list")
        elif name in BEYOND_THE_STEP_LIMIT and not detail.startswith("step limit"):
            wrong.append(f"{name}: listed as beyond the step limit, got {verdict}: {detail}")
    compared = sum(verdict == "agree" for verdict, _ in verdicts.values())
    floor = max(1, 320 // (STRIDE * SHARDS))  # a shard that compares (almost) nothing is broken
    assert compared >= floor, f"only {compared} corpus modules agree in shard {shard}"
    assert not wrong, f"{len(wrong)} of shard {shard}'s modules:\n" + "\n".join(wrong)
