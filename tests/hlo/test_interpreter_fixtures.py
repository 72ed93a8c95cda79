"""Interpreter == XLA on every real HLO fixture (tests/fixtures/hlo), classified by form.

Every module runs in its own configuration (replica_count replicas x num_partitions
partitions) on seeded random inputs.
- runnable: every form without custom calls (per-device `*.spmd.hlo` dumps, single-device
  programs in short / debug / long form): interpreter against XLA on the same text.
- `*.optimized.hlo` (fusions, bitcasts, layouts): XLA cannot recompile its own
  post-optimization dumps, so the interpreter's result on it is checked against XLA running
  the same program's runnable form (the spmd dump, else the short form); an optimized dump
  whose program has no runnable form is only listed.
- forms with custom calls (Shardy's sharding markers, LAPACK calls): neither side runs
  them; the interpreter must refuse with an error naming the unsupported opcode.
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
OPTIMIZED = [p for p in ALL if p.name.endswith(".optimized.hlo")]
CUSTOM_CALLS = [p for p in ALL if p not in OPTIMIZED and " custom-call(" in p.read_text()]
RUNNABLE = [p for p in ALL if p not in OPTIMIZED and p not in CUSTOM_CALLS]
SEEDS = (0, 1)


def runnable_twin(path: Path) -> Path | None:
    """The same program in a form XLA can run: its spmd dump, else its short form."""
    for form in (".spmd.hlo", ".short.hlo"):
        twin = path.with_name(path.name.replace(".optimized.hlo", form))
        if twin in RUNNABLE:
            return twin
    return None


COMPARED = [p for p in OPTIMIZED if runnable_twin(p) is not None]


def config(path: Path) -> tuple[object, int, int]:
    module = parse_module(path.read_text(), str(path))
    return module, module.replica_count, module.num_partitions


def test_every_fixture_is_classified() -> None:
    assert ALL, "no HLO fixtures found"
    assert len(RUNNABLE) >= 10 and len(CUSTOM_CALLS) >= 6 and len(COMPARED) >= 4
    assert set(RUNNABLE) | set(CUSTOM_CALLS) | set(OPTIMIZED) == set(ALL)


@pytest.fixture(scope="module")
def xla_results() -> dict[tuple[str, int], object]:
    """XLA outputs for (file name, seed) of every runnable fixture, in one child process."""
    keys, jobs = [], []
    for path in RUNNABLE:
        module, replicas, partitions = config(path)
        for seed in SEEDS:
            keys.append((path.name, seed))
            jobs.append(XlaJob("run", path.read_text(),
                               random_inputs(module, replicas, seed, partitions),
                               replicas, partitions))
    return dict(zip(keys, run_many_on_xla(jobs)))


def assert_outputs_equal(got: list[np.ndarray], want: object, label: str) -> None:
    if isinstance(want, Exception):
        raise want
    assert isinstance(want, list) and len(got) == len(want), label
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, f"{label} out{k}"
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, equal_nan=True,
                                       err_msg=f"{label} out{k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{label} out{k}")


@pytest.mark.parametrize("path", RUNNABLE, ids=[p.name for p in RUNNABLE])
def test_interpreter_equals_xla(path: Path, xla_results: dict) -> None:
    module, replicas, partitions = config(path)
    for seed in SEEDS:
        got = evaluate_module(module, random_inputs(module, replicas, seed, partitions),
                              replicas, partitions)
        assert_outputs_equal(got, xla_results[(path.name, seed)], f"{path.name} seed {seed}")


@pytest.mark.parametrize("path", COMPARED, ids=[p.name for p in COMPARED])
def test_optimized_dump_equals_xla_on_its_runnable_twin(path: Path, xla_results: dict) -> None:
    module, replicas, partitions = config(path)
    twin = runnable_twin(path)
    assert twin is not None
    for seed in SEEDS:
        got = evaluate_module(module, random_inputs(module, replicas, seed, partitions),
                              replicas, partitions)
        assert_outputs_equal(got, xla_results[(twin.name, seed)], f"{path.name} seed {seed}")


@pytest.mark.parametrize("path", CUSTOM_CALLS, ids=[p.name for p in CUSTOM_CALLS])
def test_custom_calls_are_refused_by_name(path: Path) -> None:
    module, replicas, partitions = config(path)
    with pytest.raises(InterpError, match=r"opcode [a-z-]+ is not supported by the interpreter"):
        evaluate_module(module, random_inputs(module, replicas, 0, partitions), replicas,
                        partitions)
