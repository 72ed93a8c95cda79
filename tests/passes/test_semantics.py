"""Before == after both passes, on real values: every golden case on the interpreter and on
XLA (4 and 8 replicas, values that overflow s32 / u32), and seeded random modules
(>= 500 on the interpreter, >= 200 on XLA per run, all XLA runs batched in one child)."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.xla import XlaJob, run_many_on_xla

from .golden_io import golden_cases, run_pipeline, with_replica_count
from .packing import pack_modules
from .random_modules import random_module_text
from .semantics import assert_same_outputs, extreme_inputs

BOTH = ["decompose-int-all-reduce", "decompose-scalar-reduce"]
CASES = golden_cases()
INTERPRETER_MODULES = 500
XLA_MODULES = 200
PACK = 50


def _golden_runs():
    for case in CASES:
        for replicas in case.replicas:
            yield case, replicas, with_replica_count(case.text, replicas)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_on_interpreter(case) -> None:
    for replicas in case.replicas:
        text = with_replica_count(case.text, replicas)
        module, _, changed = run_pipeline(text, case.passes)
        assert any(changed)
        before = parse_module(text)
        for seed in range(3):
            inputs = extreme_inputs(before, replicas, seed)
            assert_same_outputs(evaluate_module(before, inputs, replicas),
                                evaluate_module(module, inputs, replicas),
                                f"{case.name} on {replicas} replicas, seed {seed}")


def test_interpreter_sees_the_overflow() -> None:
    """The check above is not vacuous: the s32 psum of extremes wraps around."""
    case = next(c for c in CASES if c.name == "ar_s32_all4")
    module = parse_module(case.text)
    x = np.array([[2**31 - 1], [1], [2**31 - 1], [5]], dtype=np.int32).reshape(4)
    (out,) = evaluate_module(module, [x], 4)
    assert out.tolist() == [np.int32(2**31 - 1 + 1 + 2**31 - 1 + 5 - 2**32)] * 4
    after, _, _ = run_pipeline(case.text, case.passes)
    assert evaluate_module(after, [x], 4)[0].tolist() == out.tolist()


@pytest.mark.oracle
def test_golden_on_xla() -> None:
    jobs, labels = [], []
    for case, replicas, text in _golden_runs():
        module, printed, _ = run_pipeline(text, case.passes)
        inputs = extreme_inputs(parse_module(text), replicas, seed=replicas)
        jobs += [XlaJob("run", text, inputs, replicas), XlaJob("run", printed, inputs, replicas)]
        labels.append(f"{case.name} on {replicas} replicas")
    results = run_many_on_xla(jobs)
    replica_counts = set()
    for i, label in enumerate(labels):
        before, after = results[2 * i], results[2 * i + 1]
        assert isinstance(before, list), f"{label}: XLA rejected the input: {before}"
        assert isinstance(after, list), f"{label}: XLA rejected the rewrite: {after}"
        assert_same_outputs(before, after, f"{label} on XLA")
        replica_counts.add(int(label.rsplit(" on ", 1)[1].split()[0]))
    assert {4, 8} <= replica_counts


def _random_case(seed: int):
    text, replicas = random_module_text(seed)
    module, printed, changed = run_pipeline(text, BOTH)
    return text, printed, replicas, module, changed


def test_random_modules_on_interpreter() -> None:
    rewritten = 0
    for seed in range(INTERPRETER_MODULES):
        text, _, replicas, after, changed = _random_case(seed)
        rewritten += any(changed)
        before = parse_module(text)
        inputs = extreme_inputs(before, replicas, seed)
        assert_same_outputs(evaluate_module(before, inputs, replicas),
                            evaluate_module(after, inputs, replicas),
                            f"random module {seed} ({replicas} replicas)\n{text}")
    assert rewritten > INTERPRETER_MODULES // 2


@pytest.mark.oracle
def test_random_modules_on_xla() -> None:
    """Modules of one replica count are packed PACK at a time (one XLA compile per pack)."""
    by_replicas: dict[int, list[tuple[int, str, str, list[np.ndarray]]]] = {}
    rewritten = 0
    for seed in range(10_000, 10_000 + XLA_MODULES):
        text, printed, replicas, _, changed = _random_case(seed)
        rewritten += any(changed)
        inputs = extreme_inputs(parse_module(text), replicas, seed)
        by_replicas.setdefault(replicas, []).append((seed, text, printed, inputs))
    jobs, packs = [], []
    for replicas, cases in sorted(by_replicas.items()):
        for i in range(0, len(cases), PACK):
            pack = cases[i:i + PACK]
            inputs = [x for case in pack for x in case[3]]
            for column in (1, 2):  # before, after
                jobs.append(XlaJob("run", pack_modules([c[column] for c in pack], replicas),
                                   inputs, replicas))
            packs.append(pack)
    results = run_many_on_xla(jobs)
    for i, pack in enumerate(packs):
        before, after = results[2 * i], results[2 * i + 1]
        seeds = [c[0] for c in pack]
        assert isinstance(before, list), f"modules {seeds}: XLA rejected them: {before}"
        assert isinstance(after, list), f"modules {seeds}: XLA rejected the rewrites: {after}"
        assert_same_outputs(before, after, f"random modules {seeds} on XLA")
    assert sum(len(p) for p in packs) == XLA_MODULES
    assert rewritten > XLA_MODULES // 2
