"""Interpreter == XLA CPU on every module of XLA's test corpus (../shared/xla-hlo-tests, not
part of the package) that XLA CPU runs.

Every module XLA's parser accepts is read and verified by tilecc (XLA's mixed-precision
option on, as XLA's tests use it) and given seeded random inputs on the device counts its
collectives name (tilecc.hlo.device_count: the pass tests write groups for more devices than
their headers set): finite floats clipped to [-1, 1] (sums never overflow part-way, so the
result does not depend on the summation order), the integers of parameters that may bound a
loop in [0, 3] (random_inputs.loop_safe). The interpreter runs it, then XLA CPU does, many
modules per compile (xla_batch; one XLA child per test process). Outputs must be equal:
integers and pred exactly, floats to rtol 2e-6 / atol 1e-6 (the other oracle tests' bound),
NaN where XLA has NaN.

What is not compared, and why -- each a computed verdict or a listed line with its reason:
- XLA CPU refuses the module (compile or run error): computed, counted;
- tilecc's verifier refuses it: XLA must refuse it too (checked, computed);
- inputs of more than MAX_INPUT_ELEMENTS elements: computed (the suite's time budget);
- collectives, unless TILECC_XLA_CORPUS_COLLECTIVES=1 (see WITH_COLLECTIVES), and host
  transfers (infeed / outfeed / send / recv: XLA CPU waits for a host): computed;
- an elided constant `{...}`: computed (ELIDED says why XLA's value is no reference);
- XLA_ABORTS: XLA CPU's process dies or does not answer (listed: a dead child costs a
  restart, seconds, so these are not tried); TOO_SLOW: the interpreter needs more than 2 s
  of CPU (listed, measured);
- BEYOND_THE_STEP_LIMIT, INTERPRETER_GAPS: XLA runs them, the interpreter does not, listed
  with why; a listed module that starts agreeing fails the test (take it off the list).
Shards are parametrized (SHARDS) so pytest-xdist spreads them. By default every STRIDE-th
module is tried (TILECC_XLA_CORPUS_STRIDE=1: all).
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
from tilecc.hlo.types import Shape
from tilecc.hlo.verifier import verify_module
from tilecc.limits import LimitError
from xla_batch import run_batched

pytestmark = pytest.mark.oracle

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "xla-hlo-tests"
SHARDS = 8
STRIDE = int(os.environ.get("TILECC_XLA_CORPUS_STRIDE", "8"))
"""Every STRIDE-th corpus module is tried (1: all of them; see the README for that run)."""
BATCH = 40
MAX_INPUT_ELEMENTS = int(os.environ.get("TILECC_XLA_CORPUS_MAX_ELEMENTS", 1 << 16))
"""Modules with larger inputs are left out (the suite's time budget); raise it to run them."""
XLA_DEVICES = 256  # the most any corpus module's collectives name (one child for all)
STEPS_FOR_BEYOND = 200_000
HOST_TRANSFERS = frozenset({HloOpcode.INFEED, HloOpcode.OUTFEED, HloOpcode.SEND,
                            HloOpcode.SEND_DONE, HloOpcode.RECV, HloOpcode.RECV_DONE})
WITH_COLLECTIVES = os.environ.get("TILECC_XLA_CORPUS_COLLECTIVES") == "1"
"""Modules with collectives are tried only when set: XLA CPU's collectives wait for every
device, and some corpus modules' devices do not all arrive (a collective in a loop or a
branch taken differently), which hangs the XLA child until its timeout (a minute each)."""
REPORT = os.environ.get("TILECC_XLA_CORPUS_REPORT")
"""A file to which each shard appends its verdict per module (JSON lines), for measuring."""

ELIDED = ("an elided constant {...}: XLA's parser fills it from a process-wide counter "
          "(bit patterns 0, 1, 2, ... continuing over every such constant it has read), so "
          "its value depends on what the process parsed before")
XLA_ABORTS: dict[str, str] = {}
BEYOND_THE_STEP_LIMIT: dict[str, str] = {
    "00986_while_loop_trip_count_annotator_test__TripCountAnnotatorTest."
    "KnownLargeTripCount.hlo": "a constant trip count of 1,000,000",
    "02335_while_loop_simplifier_test__WhileLoopSimplifierTest.FlattenNestedTuple.hlo":
        "condition constant(true): XLA's while-loop simplifier drops the loop",
    "02353_while_loop_simplifier_test__WhileLoopSimplifierTest."
    "FlattenNestedTupleWithOriginalValue.hlo":
        "condition constant(true): XLA's while-loop simplifier drops the loop",
}
SORT = "more than 2 s of interpreter CPU (measured): a sort through its comparator"
WHILE = "more than 2 s of interpreter CPU (measured): while-loop trips"
WINDOW = "more than 2 s of interpreter CPU (measured): a reduce-window of long windows"
TOO_SLOW: dict[str, str] = {  # XLA runs them; left out for the suite's time budget
    "00821_while_loop_all_reduce_code_motion_setup_test__ReorderReduceTransposeTest.ReduceScatterConvertTransposeInWhileBody.hlo": WHILE,
    "00822_while_loop_all_reduce_code_motion_setup_test__ReorderReduceTransposeTest.ReduceScatterTransposeReshapeDynamicUpdateSliceInWhileBody.hlo": WHILE,
    "00823_while_loop_all_reduce_code_motion_setup_test__ReorderConvertReduceAddTest.SimpleConvertReduceScatterAddInWhileBody.hlo": WHILE,
    "00825_while_loop_all_reduce_code_motion_setup_test__ReorderConvertReduceAddTest.ConvertAllReduceAddInWhileBody.hlo": WHILE,
    "00826_while_loop_all_reduce_code_motion_setup_test__ReorderConvertReduceAddTest.ConvertReduceConvertBackPattern.hlo": WHILE,
    "00860_permutation_sort_expander_test__PermutationSortExpanderTest.ReplacePermutationSortWithScatter.hlo": SORT,
    "00861_permutation_sort_expander_test__PermutationSortExpanderTest.DontReplaceIfWrongComparisonDirection.hlo": SORT,
    "00862_permutation_sort_expander_test__PermutationSortExpanderTest.DontReplaceIfComparingWrongParameters.hlo": SORT,
    "00864_permutation_sort_expander_test__PermutationSortExpanderTest.DontReplacePermutationSortWrongDimensions.hlo": SORT,
    "00886_stable_sort_expander_test__StableSortExpanderTest.StabilizeSortDontReuseIotaOperandWrongDimension.hlo": SORT,
    "00967_reduce_window_rewriter_test__ReduceWindowRewriterTest.OptimizeR1InclusiveScan.hlo": WINDOW,
    "00968_reduce_window_rewriter_test__ReduceWindowRewriterTest.OptimizeR1InclusiveScanVariadic.hlo": WINDOW,
    "01322_sharding_propagation_test__ParameterizedMetadataTest.PartiallyManualTupleWithRepeatedOperandsBackWardPass.hlo": WHILE,
    "01541_sharding_propagation_test__ShardingPropagationTest.SortOperandShardedOnSortDim_RankTwo.hlo": SORT,
    "01543_sharding_propagation_test__ShardingPropagationTest.WhileDSManual.hlo": WHILE,
    "01760_spmd_partitioner_test__SpmdPartitioningTest.SortAlongNonPartitionedDimension.hlo": SORT,
    "01774_spmd_partitioner_test__SpmdPartitioningTest.PartitionSortInTopKWhenComparisonWithSelect.hlo": SORT,
    "01777_spmd_partitioner_test__SpmdPartitioningTest.NoPartitionSortInTopKWhenSliceInOtherDim.hlo": SORT,
    "01779_spmd_partitioner_test__SpmdPartitioningTest.SortShardedOnSortDim_OneOperand.hlo": SORT,
    "01780_spmd_partitioner_test__SpmdPartitioningTest.SortShardedOnSortDim_TwoOperands.hlo": SORT,
    "01782_spmd_partitioner_test__SpmdPartitioningTest.SortShardedOnSortDim_ThreeOperands.hlo": SORT,
    "01803_spmd_partitioner_test__SpmdPartitioningTest.SortShardedOnSortDim_LastTileDimReplicate.hlo": SORT,
    "02272_while_loop_constant_sinking_test__WhileLoopConstantSinkingTest.SinkOneConstant.hlo": WHILE,
    "02273_while_loop_constant_sinking_test__WhileLoopConstantSinkingTest.SinkOneConstantWithOriginalValue.hlo": WHILE,
    "02274_while_loop_constant_sinking_test__WhileLoopConstantSinkingTest.SinkBroadcastOfConstant.hlo": WHILE,
    "02275_while_loop_constant_sinking_test__WhileLoopConstantSinkingTest.SinkBroadcastOfConstantWithOriginalValue.hlo": WHILE,
    "02276_while_loop_constant_sinking_test__WhileLoopConstantSinkingTest.KeepConstantsLoopInvariant.hlo": WHILE,
    "02279_while_loop_constant_sinking_test__WhileLoopConstantSinkingTest.DuplicateGTEs.hlo": WHILE,
    "02291_while_loop_expensive_invariant_code_motion_test__global_kModuleWithInflatingInvariantDot.hlo": WHILE,
    "02292_while_loop_expensive_invariant_code_motion_test__WhileLoopExpensiveInvariantCodeMotionTest.HoistsOpWithDuplicateOperands.hlo": WHILE,
    "02293_while_loop_expensive_invariant_code_motion_test__WhileLoopExpensiveInvariantCodeMotionTest.DoesNotHoistShardingCustomCalls.hlo": WHILE,
    "02294_while_loop_expensive_invariant_code_motion_test__WhileLoopExpensiveInvariantCodeMotionTest.HoistWithOriginalValue.hlo": WHILE,
    "02295_while_loop_fusible_sinking_test__WhileLoopFusibleSinkingTest.SinkOneFusible.hlo": WHILE,
    "02296_while_loop_fusible_sinking_test__WhileLoopFusibleSinkingTest.SinkMask.hlo": WHILE,
    "02297_while_loop_fusible_sinking_test__WhileLoopFusibleSinkingTest.NoSinkSlicedMask.hlo": WHILE,
    "02307_while_loop_invariant_code_motion_test__global_kConstantHoistingTestCase.hlo": WHILE,
    "02327_while_loop_simplifier_test__WhileLoopSimplifierTest.LoopWithElemUsedTwiceNotSimplified.hlo": WHILE,
    "02332_while_loop_simplifier_test__WhileLoopSimplifierTest.LoopWithNonTupleBodyShapeNotSimplified.hlo": WHILE,
    "02336_while_loop_simplifier_test__WhileLoopSimplifierTest.OnlyConstantsInLoopCarry.hlo": WHILE,
    "02498_reduce_window_test__ReduceWindowHloTest.VariadicWithNonTrivialWindows.hlo": WINDOW,
}
INTERPRETER_GAPS: dict[str, str] = {  # XLA CPU runs them; the interpreter has no step yet
    "00881_rng_expander_test__RngExpanderTest.ReplacesRngWithGetRngSeedCustomCall.hlo":
        "rng has no interpreter step (XLA CPU's draw order is not reproduced)",
    "01347_sharding_propagation_test__ParameterizedMetadataTest."
    "ReduceWindowBackwardPass.hlo": "a padded reduce-window whose init is a parameter: "
                                    "differs from XLA CPU's; not yet understood",
    "00376_hlo_parser_test__CreateShortTestCases_SortKeyValueR2.hlo":
        "a 1024-long key / value sort that differs from XLA CPU's; not yet understood",
}


def _count(shape: Shape) -> int:
    return sum(_count(s) for s in shape.tuple_shapes) if shape.is_tuple else \
        shape.element_count()


def _clipped(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_clipped(v) for v in value)
    if value.dtype.kind in "fV" and value.dtype.itemsize:
        wide = value.astype(np.float64)
        return np.where(np.isfinite(wide), np.clip(wide, -1, 1), wide).astype(value.dtype)
    return value


def inputs_for(module: HloModule, devices: int) -> list[Any]:
    """Seeded random inputs (see the module docstring)."""
    assert module.entry is not None
    rng = np.random.default_rng(0)
    values = [random_value(p.shape, devices, rng, p.name) for p in module.entry.parameters]
    return loop_safe(module, [_clipped(v) for v in values])


def close(got: np.ndarray, want: np.ndarray) -> bool:
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind in "iub" or got.dtype.itemsize == 0:
        return bool(np.array_equal(got, want))
    wide = np.complex128 if got.dtype.kind == "c" else np.float64
    g, w = got.astype(wide), want.astype(wide)
    return bool(np.all(np.isclose(g, w, rtol=2e-6, atol=1e-6) | (np.isnan(g) & np.isnan(w))))


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
    elided, collective, host-transfer, listed."""
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
        if any(inst.opcode in HOST_TRANSFERS for comp in module.computations
               for inst in comp.instructions):
            verdicts[name] = ("host-transfer", "infeed / outfeed / send / recv: XLA CPU waits "
                                               "for a host that never answers")
            continue
        if not WITH_COLLECTIVES and any(inst.opcode in COLLECTIVES for comp in
                                        module.computations for inst in comp.instructions):
            verdicts[name] = ("collective", "collectives run with TILECC_XLA_CORPUS_COLLECTIVES=1")
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
        listed = BEYOND_THE_STEP_LIMIT.get(name) or INTERPRETER_GAPS.get(name)
        if verdict in ("differ", "interp-fails", "tilecc-refuses", "no-inputs") and not listed:
            wrong.append(f"{name}: {verdict}: {detail}")
        elif listed and verdict == "agree":
            wrong.append(f"{name}: now agrees with XLA: take it off its list")
        elif name in BEYOND_THE_STEP_LIMIT and not detail.startswith("step limit"):
            wrong.append(f"{name}: listed as beyond the step limit, got {verdict}: {detail}")
    compared = sum(verdict == "agree" for verdict, _ in verdicts.values())
    assert compared >= 40 // STRIDE, f"only {compared} corpus modules agree in shard {shard}"
    assert not wrong, f"{len(wrong)} of shard {shard}'s modules:\n" + "\n".join(wrong)
