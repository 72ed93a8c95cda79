"""HloModule.clone: the same printout, no shared IR, and the shared before/after checker."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from tilecc.hlo.equivalence import check_equivalence, compare_outputs, default_replicas
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.verifier import verify_module

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures" / "hlo").glob("*.hlo"))

TEXT = """HloModule c, replica_count=2
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  p = s32[4] parameter(0)
  ar = s32[4] all-reduce(p), replica_groups={}, to_apply=add
  n = s32[4] negate(ar), control-predecessors={p}
  ROOT t = (s32[4], s32[4]) tuple(n, ar)
}
"""


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_clone_prints_as_the_original(path: Path) -> None:
    module = parse_module(path.read_text(encoding="utf-8"), str(path))
    copy = module.clone()
    assert print_module(copy) == print_module(module)
    verify_module(copy)


def test_clone_shares_no_instruction_or_computation() -> None:
    module = parse_module(TEXT)
    copy = module.clone()
    originals = {id(i) for c in module.computations for i in c.instructions}
    originals |= {id(c) for c in module.computations}
    for comp in copy.computations:
        assert id(comp) not in originals and comp.parent is copy
        for inst in comp.instructions:
            assert id(inst) not in originals and inst.parent is comp
            for linked in [*inst.operands, *inst.users, *inst.control_predecessors,
                           *(inst.control_successors or [])]:
                assert linked.parent is comp
            for callee in inst.called_computations():
                assert callee in copy.computations
    assert copy.entry is copy.computations[-1]


def test_changing_the_clone_leaves_the_original_and_its_names_alone() -> None:
    module = parse_module(TEXT)
    text = print_module(module)
    copy = module.clone()
    entry = copy.entry
    assert entry is not None
    ar = next(i for i in entry.instructions if i.opcode is HloOpcode.ALL_REDUCE)
    doubled = entry.add_instruction(HloInstruction.create(HloOpcode.ADD, ar.shape, [ar, ar]))
    neg = next(i for i in entry.instructions if i.opcode is HloOpcode.NEGATE)
    neg.replace_all_uses_with(doubled)
    copy.computations[0].root.attributes["x"] = "1"  # type: ignore[union-attr]
    verify_module(copy)
    assert print_module(module) == text != print_module(copy)
    assert [i.name for i in module.entry.instructions] == ["p", "ar", "n", "t"]  # type: ignore[union-attr]
    assert module.entry.root.operands[0].opcode is HloOpcode.NEGATE  # type: ignore[union-attr]
    # the name uniquers are copies: the name the clone took is still free in the original
    assert doubled.name == "add" and module.claim_name("add") == "add"


def test_equivalence_reports_equal_and_mismatch() -> None:
    before = parse_module(TEXT)
    after = before.clone()
    out = io.StringIO()
    assert check_equivalence(before, after, 2, 0, "interpreter", {}, out)
    assert out.getvalue().count(": equal") == 2
    # negate -> copy changes output 0 only
    neg = next(i for i in after.entry.instructions if i.opcode is HloOpcode.NEGATE)  # type: ignore[union-attr]
    neg.opcode = HloOpcode.COPY
    out = io.StringIO()
    given = {0: np.array([[1, 2, 3, 4], [0, 0, 0, -5]], np.int32)}
    assert not check_equivalence(before, after, 2, 0, "interpreter", given, out)
    lines = out.getvalue().splitlines()
    assert lines[1].startswith("  output 0: mismatch at device 0, index [0]: before ")
    assert "(-1), after " in lines[1] and lines[1].endswith("(1)")
    assert lines[2] == "  output 1: equal"
    assert default_replicas(before) == 2 and default_replicas(parse_module("HloModule m\n"
           "ENTRY e {\n  ROOT c = s32[] constant(1)\n}\n")) == 4


@pytest.mark.parametrize("x, y, verdict", [
    (np.array([np.nan, 1.0], np.float32), np.array([np.nan, 1.0], np.float32), "equal"),
    (np.array([[0.0]], np.float32), np.array([[-0.0]], np.float32), "equal"),
    (np.array([[np.inf]]), np.array([[-np.inf]]), "mismatch at device 0, index [0]"),
    (np.array([[-2**31]], np.int32), np.array([[2**31 - 1]], np.int32), "mismatch at device 0"),
    (np.zeros((1, 2), np.int32), np.zeros((1, 2), np.uint32), "mismatch: int32[1, 2] before"),
])
def test_compare_outputs(x: np.ndarray, y: np.ndarray, verdict: str) -> None:
    assert compare_outputs(x, y).startswith(verdict)
