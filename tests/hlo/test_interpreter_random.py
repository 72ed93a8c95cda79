"""Interpreter == XLA on randomly generated modules (tests/hlo/random_modules.py).

Two drivers: a fixed batch of seeded modules that runs through one XLA child process, and a
hypothesis property (derandomized, so CI is deterministic) that submits each example to a
shared XlaSession and shrinks a failing module. Integers must match exactly; floats to a
tight per-type tolerance (float sums may accumulate in another order) with identical NaN
positions.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from random_modules import RandomModule, RngChooser, build_module, modules
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import XlaJob, XlaSession, run_many_on_xla

pytestmark = pytest.mark.oracle

BATCH_SEEDS = range(150)
RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2e-3,
        np.dtype(ml_dtypes.bfloat16): 1.6e-2}


def run_both(module: RandomModule, seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    parsed = parse_module(module.text, "<random>")
    inputs = random_inputs(parsed, module.replicas, seed)
    return evaluate_module(parsed, inputs, module.replicas), inputs


def assert_matches(got: list[np.ndarray], want: object, module: RandomModule) -> None:
    if isinstance(want, Exception):
        raise AssertionError(f"XLA rejected a generated module:\n{module.text}") from want
    assert isinstance(want, list) and len(got) == len(want), module.text
    for k, (g, w) in enumerate(zip(got, want)):
        where = f"output {k} of\n{module.text}"
        assert g.dtype == w.dtype and g.shape == w.shape, where
        if g.dtype.kind in "biu":
            mismatch = np.flatnonzero(g != w)
            assert mismatch.size == 0, (f"{mismatch.size} elements differ, first at flat "
                                        f"index {mismatch[0]}: {g.reshape(-1)[mismatch[0]]} "
                                        f"vs XLA {w.reshape(-1)[mismatch[0]]}; {where}")
            continue
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        assert np.array_equal(np.isnan(g64), np.isnan(w64)), f"NaN positions differ; {where}"
        np.testing.assert_allclose(g64, w64, rtol=RTOL[g.dtype], atol=1e-30, err_msg=where)


def test_generator_covers_types_replicas_and_ops() -> None:
    batch = [build_module(RngChooser(seed)) for seed in BATCH_SEEDS]
    assert {m.element_type for m in batch} >= {"s8", "s32", "s64", "u8", "u32", "u64", "pred",
                                               "f32", "bf16", "f16"}
    assert {m.replicas for m in batch} == set(range(1, 9))
    text = "\n".join(m.text for m in batch)
    for needle in ("all-reduce(", "all-gather(", "reduce-scatter(", "all-to-all(",
                   "collective-permute(", " reduce(", "replica-id()", "<=[", "T(1,0)",
                   "replica_groups={}", "use_global_device_ids=true", "divide(",
                   "shift-right-arithmetic("):
        assert needle in text, needle


def test_seeded_batch_matches_xla() -> None:
    batch = [build_module(RngChooser(seed)) for seed in BATCH_SEEDS]
    runs = [run_both(module, seed) for seed, module in zip(BATCH_SEEDS, batch)]
    jobs = [XlaJob("run", m.text, inputs, m.replicas) for m, (_, inputs) in zip(batch, runs)]
    for module, (got, _), want in zip(batch, runs, run_many_on_xla(jobs)):
        assert_matches(got, want, module)


@pytest.fixture(scope="module")
def session() -> XlaSession:
    with XlaSession(devices=8) as shared:
        yield shared


@settings(max_examples=25, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(module=modules())
def test_property_interpreter_matches_xla(module: RandomModule, session: XlaSession) -> None:
    got, inputs = run_both(module, seed=len(module.text))
    want = session.submit(XlaJob("run", module.text, inputs, module.replicas))
    assert_matches(got, want, module)
