"""Short seeded fuzzing runs of every command, as CI runs them: each mutant of the real
fixtures runs in a forked child with CPU-time and address-space limits, and none may break
the bad-input promise (tilecc/fuzz/runner.py lists the classes). The long campaigns are
`python bench/fuzz.py` (figures in the README)."""

from __future__ import annotations

import pytest

from tilecc.fuzz.runner import ForkServer
from tilecc.fuzz.targets import TARGETS, available

MUTANTS = 8


@pytest.fixture(scope="module")
def server() -> ForkServer:
    if not available():
        pytest.skip("needs a source checkout (examples/ and tests/fixtures/)")
    return ForkServer(cpu_limit=20)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_no_mutant_breaks_the_promise(target: str, server: ForkServer) -> None:
    broken = []
    classes = set()
    for case, _ in TARGETS[target].cases("ci-1", MUTANTS):
        outcome = server.run(case)
        classes.add(outcome.klass)
        if outcome.violation:
            broken.append((outcome.klass, case.argv, outcome.stderr[-400:]))
    assert not broken, broken
    assert "clean error" in classes   # the mutants do reach the error paths
