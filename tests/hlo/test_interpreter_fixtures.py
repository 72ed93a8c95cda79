"""Interpreter == XLA on every real HLO fixture (tests/fixtures/hlo), classified by form.

- runnable: the per-device `*.spmd.hlo` dumps and the single-device reduce cases in every
  form; each runs as replica_count * num_partitions replicas (hlo.md: per-device SPMD
  dumps re-run as replicas) on seeded random inputs, on both the interpreter and XLA.
- `*.optimized.hlo` (fusions, bitcasts, layouts): XLA cannot recompile its own
  post-optimization dumps, so the interpreter's result is checked against XLA running the
  same program's spmd dump.
- forms that still hold Shardy custom calls (jit lowerings of shard_map programs): neither
  side can run them; the interpreter must refuse by naming custom-call.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import XlaJob, run_many_on_xla

pytestmark = pytest.mark.oracle

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hlo"
ALL = sorted(FIXTURES.glob("*.hlo"))
SHARDY = [p for p in ALL if "custom_call_target=\"xla.sdy" in p.read_text()
          or "custom_call_target=\"Sharding\"" in p.read_text()]
OPTIMIZED = [p for p in ALL if p.name.endswith(".optimized.hlo")]
RUNNABLE = [p for p in ALL if p not in SHARDY and p not in OPTIMIZED]
SEEDS = (0, 1)


def devices_of(text: str) -> int:
    module = parse_module(text)
    return module.replica_count * module.num_partitions


def spmd_twin(path: Path) -> Path:
    return path.with_name(path.name.replace(".optimized.hlo", ".spmd.hlo"))


def test_every_fixture_is_classified() -> None:
    assert ALL, "no HLO fixtures found"
    assert len(RUNNABLE) >= 10 and len(SHARDY) >= 6 and len(OPTIMIZED) >= 4
    assert all(spmd_twin(p).exists() for p in OPTIMIZED)


@pytest.fixture(scope="module")
def xla_results() -> dict[tuple[str, int], list]:
    """XLA outputs for (file name, seed) of every runnable fixture, in one child process."""
    keys, jobs = [], []
    for path in RUNNABLE:
        text = path.read_text()
        module = parse_module(text, str(path))
        devices = devices_of(text)
        for seed in SEEDS:
            keys.append((path.name, seed))
            jobs.append(XlaJob("run", text, random_inputs(module, devices, seed), devices))
    return dict(zip(keys, run_many_on_xla(jobs)))


def assert_outputs_equal(got: list[np.ndarray], want: list[np.ndarray], label: str) -> None:
    assert len(got) == len(want), label
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, f"{label} out{k}"
        if np.issubdtype(g.dtype, np.floating):
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, err_msg=f"{label} out{k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{label} out{k}")


@pytest.mark.parametrize("path", RUNNABLE, ids=[p.name for p in RUNNABLE])
def test_interpreter_equals_xla(path: Path, xla_results: dict) -> None:
    text = path.read_text()
    module = parse_module(text, str(path))
    devices = devices_of(text)
    for seed in SEEDS:
        want = xla_results[(path.name, seed)]
        if isinstance(want, Exception):
            raise want
        got = evaluate_module(module, random_inputs(module, devices, seed), devices)
        assert_outputs_equal(got, want, f"{path.name} seed {seed}")


@pytest.mark.parametrize("path", OPTIMIZED, ids=[p.name for p in OPTIMIZED])
def test_optimized_dump_equals_xla_on_its_spmd_twin(path: Path, xla_results: dict) -> None:
    module = parse_module(path.read_text(), str(path))
    twin = spmd_twin(path)
    devices = devices_of(twin.read_text())
    for seed in SEEDS:
        want = xla_results[(twin.name, seed)]
        if isinstance(want, Exception):
            raise want
        got = evaluate_module(module, random_inputs(module, devices, seed), devices)
        assert_outputs_equal(got, want, f"{path.name} seed {seed}")


@pytest.mark.parametrize("path", SHARDY, ids=[p.name for p in SHARDY])
def test_shardy_custom_calls_are_refused_by_name(path: Path) -> None:
    module = parse_module(path.read_text(), str(path))
    devices = module.replica_count * module.num_partitions
    with pytest.raises(InterpError, match="opcode custom-call is not supported"):
        evaluate_module(module, random_inputs(module, devices, 0), devices)
