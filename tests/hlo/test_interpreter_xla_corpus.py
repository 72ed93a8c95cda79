"""Interpreter == XLA CPU on the modules of XLA's test corpus (../shared/xla-hlo-tests, not
part of the package) that both can run, without collectives (see below).

A module is a candidate when tilecc reads and verifies it (XLA's mixed-precision option on,
as XLA's tests use it), every entry parameter is an array or a (nested) tuple of arrays
random_value can fill, every opcode has an interpreter step, it has no collective (see
COLLECTIVES), and its inputs are small. Each candidate runs once on XLA CPU (a tuple
parameter given as its leaves) with seeded random inputs (finite floats clipped to [-1, 1],
so sums never overflow part-way and the result does not depend on the summation order; in
a module with a while loop, integers in [0, 3], so a loop bounded by a parameter ends after
at most 3 trips on both sides), all of them in one child process (an
XLA refusal, e.g. of a scheduled or GPU-only module, means XLA CPU cannot run it, and the
module is not compared), then on the interpreter; outputs must be equal (integers exactly,
floats to a few ulps, NaN equal to NaN). A deterministic sample runs by default (every
STRIDE-th corpus module, TILECC_XLA_CORPUS_STRIDE=1 for all of them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tilecc.errors import TileccError
from tilecc.hlo.interp.custom_calls import is_identity_custom_call
from tilecc.hlo.interp.steps import STEPS
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.ir import HloModule
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_value
from tilecc.hlo.types import Shape
from tilecc.hlo.verifier import verify_module
from tilecc.limits import LimitError

pytestmark = pytest.mark.oracle

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "xla-hlo-tests"
MAX_INPUT_ELEMENTS = 1 << 12
# Collectives are left out: the corpus' pass tests name replica groups for device counts
# their headers do not set (XLA CPU runs them on one device regardless); the interpreter's
# collectives are compared with XLA in test_interpreter_random / _fixtures.
COLLECTIVES = frozenset({
    HloOpcode.ALL_REDUCE, HloOpcode.ALL_GATHER, HloOpcode.REDUCE_SCATTER,
    HloOpcode.ALL_TO_ALL, HloOpcode.COLLECTIVE_PERMUTE, HloOpcode.COLLECTIVE_BROADCAST,
    HloOpcode.REPLICA_ID, HloOpcode.PARTITION_ID})
KNOWN_DIFFERENT = {  # module -> what is known of the difference
    "modules/01347_sharding_propagation_test__ParameterizedMetadataTest."
    "ReduceWindowBackwardPass.hlo": "reduce-window whose result differs from XLA CPU's; "
                                    "not yet understood",
    "modules/01307_sharding_propagation_test__ShardingPropagationTest."
    "ManualTupleReduceForwardPass.hlo": "a 128-wide variadic argmax reduce meeting NaN: the "
                                        "result depends on the combining order, and the "
                                        "interpreter's pairwise tree is not XLA CPU's order",
}
BEYOND_THE_STEP_LIMIT = {  # loops whose constant trip count XLA CPU runs in a blink and the
    # interpreter stops at its step limit (tilecc.limits' "steps"), as its contract says; run
    # with STEPS_FOR_BEYOND as the limit, which stops them as surely and sooner
    "modules/00986_while_loop_trip_count_annotator_test__TripCountAnnotatorTest."
    "KnownLargeTripCount.hlo",
    "modules/02335_while_loop_simplifier_test__WhileLoopSimplifierTest.FlattenNestedTuple.hlo",
    "modules/02353_while_loop_simplifier_test__WhileLoopSimplifierTest."
    "FlattenNestedTupleWithOriginalValue.hlo",
}
STRIDE = int(os.environ.get("TILECC_XLA_CORPUS_STRIDE", "8"))
"""Every STRIDE-th corpus module is tried (CI time: XLA compiles each one); 1 tries all."""
SHARDS = 4   # the picked modules in four tests, so a parallel run spreads XLA's compiles
MIN_COMPARED = 40 // STRIDE // SHARDS
STEPS_FOR_BEYOND = 200_000


def candidate(text: str) -> tuple[HloModule | None, str]:
    """The module if the interpreter can be compared on it, else None and why not."""
    try:
        module = parse_module(text)
        verify_module(module, allow_mixed_precision=True)
    except TileccError as err:
        return None, f"not verified: {err}"
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode is HloOpcode.PARAMETER:
                continue
            if inst.opcode not in STEPS or (inst.opcode is HloOpcode.CUSTOM_CALL
                                            and not is_identity_custom_call(inst)):
                return None, f"no interpreter step for {inst.opcode.mnemonic}"
            if inst.opcode in COLLECTIVES:
                return None, "a collective"
            if inst.literal_text == "{...}":
                return None, "an elided constant, whose value the text does not say"
    return module, ""


def _leaves(value: Any) -> list[np.ndarray]:
    return [x for v in value for x in _leaves(v)] if isinstance(value, tuple) else [value]


def _count(shape: Shape) -> int:
    return sum(_count(s) for s in shape.tuple_shapes) if shape.is_tuple else \
        shape.element_count()


def _bounded(value: Any, loops: bool) -> Any:
    if isinstance(value, tuple):
        return tuple(_bounded(v, loops) for v in value)
    if value.dtype.kind in "fV" and value.dtype.itemsize:
        wide = value.astype(np.float64)
        return np.where(np.isfinite(wide), np.clip(wide, -1, 1), wide).astype(value.dtype)
    if value.dtype.kind in "iu" and loops:
        return (np.abs(value.astype(np.int64)) % 4).astype(value.dtype)
    return value


def inputs_for(module: HloModule) -> list[Any] | None:
    """Seeded random inputs (see the module docstring); None when a parameter holds a token
    or a sub-byte array, or the inputs are big."""
    assert module.entry is not None
    devices = module.replica_count * module.num_partitions
    loops = any(i.opcode is HloOpcode.WHILE for c in module.computations
                for i in c.instructions)
    sizes = [_count(p.shape) for p in module.entry.parameters]
    if sum(sizes) > MAX_INPUT_ELEMENTS:
        return None
    rng = np.random.default_rng(0)
    try:
        values = [random_value(p.shape, devices, rng, p.name) for p in module.entry.parameters]
    except TileccError:
        return None
    leaves = _leaves(tuple(values))
    if any(x.dtype == np.bool_ and x.ndim == 2 and x.shape[1] == 0 for x in leaves):
        return None
    return [_bounded(v, loops) for v in values]


def close(got: np.ndarray, want: np.ndarray) -> bool:
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind in "iub":
        return bool(np.array_equal(got, want))
    wide = np.complex128 if got.dtype.kind == "c" else np.float64
    g, w = got.astype(wide), want.astype(wide)
    return bool(np.all((np.isclose(g, w, rtol=2e-6, atol=1e-6)) | (np.isnan(g) & np.isnan(w))))


@pytest.mark.skipif(not (CORPUS / "manifest.json").exists(),
                    reason=f"XLA's test corpus is not beside this checkout ({CORPUS}); it is "
                           "data for conformance runs, not part of the package")
@pytest.mark.parametrize("shard", range(SHARDS))
def test_interpreter_equals_xla_on_the_corpus(shard: int) -> None:
    from tilecc.hlo.printer import print_module
    from tilecc.hlo.xla import XlaJob, run_many_on_xla

    manifest = json.loads((CORPUS / "manifest.json").read_text())["modules"]
    picked = []
    for entry in manifest[::STRIDE][shard::SHARDS]:
        if entry["xla_verdict"] != "accept":
            continue
        module, _ = candidate((CORPUS / entry["file"]).read_text(encoding="utf-8"))
        inputs = inputs_for(module) if module is not None else None
        if module is not None and inputs is not None:
            picked.append((entry["file"], module, inputs))
    jobs = [XlaJob("run", print_module(m), x, m.replica_count, m.num_partitions)
            for _, m, x in picked]
    results = run_many_on_xla(jobs, timeout=60)
    compared, wrong = 0, []
    known = set(KNOWN_DIFFERENT)
    for (name, module, inputs), want in zip(picked, results):
        if isinstance(want, Exception):
            continue  # XLA CPU does not run it
        compared += 1
        try:
            got = evaluate_module(module, inputs, module.replica_count, module.num_partitions,
                                  STEPS_FOR_BEYOND if name in BEYOND_THE_STEP_LIMIT else None)
        except LimitError as err:
            if name not in BEYOND_THE_STEP_LIMIT or "HLO steps" not in str(err):
                wrong.append(f"{name}: interpreter refused: {err}")
            continue
        except TileccError as err:
            wrong.append(f"{name}: interpreter refused: {err}")
            continue
        if name in BEYOND_THE_STEP_LIMIT:
            wrong.append(f"{name}: now runs within the step limit: take it off the list")
        assert isinstance(want, list)
        equal = len(got) == len(want) and all(close(g, w) for g, w in zip(got, want))
        if equal == (name in known):
            wrong.append(f"{name}: outputs " + ("now equal: take it off KNOWN_DIFFERENT"
                                                if equal else "differ"))
    assert compared >= MIN_COMPARED, f"only {compared} corpus modules ran on XLA CPU"
    assert not wrong, f"{len(wrong)} of {compared} modules differ:\n" + "\n".join(wrong)
