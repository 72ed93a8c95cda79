"""IR mutation keeps use lists right: replace, remove, dead-code removal, post-order, names."""

from __future__ import annotations

import pytest

from tilecc.errors import VerifyError
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.types import PrimitiveType, Shape
from tilecc.hlo.verifier import verify_module

TEXT = """HloModule ir
ENTRY e {
  p = s32[4] parameter(0)
  q = s32[4] parameter(1)
  a = s32[4] add(p, q), metadata={op_name="a"}, sharding={replicated}
  n = s32[4] negate(a)
  m = s32[4] multiply(a, a)
  cc = s32[4] custom-call(n), custom_call_target="x", custom_call_has_side_effect=true
  ROOT r = s32[4] subtract(m, n)
}
"""


def insts(module) -> dict[str, HloInstruction]:
    return {i.name: i for i in module.entry.instructions}


def test_users_are_distinct_and_symmetric() -> None:
    m = parse_module(TEXT)
    i = insts(m)
    assert i["a"].users == [i["n"], i["m"]]
    assert i["m"].operands == [i["a"], i["a"]]
    assert i["n"].users == [i["cc"], i["r"]]


def test_replace_instruction_moves_uses_copies_metadata_and_removes_dead() -> None:
    m = parse_module(TEXT)
    comp = m.entry
    i = insts(m)
    s32 = Shape.array(PrimitiveType.S32, (4,))
    new = comp.add_instruction(HloInstruction.create(HloOpcode.SUBTRACT, s32, [i["p"], i["q"]]))
    assert new.name == "subtract"
    comp.replace_instruction(i["a"], new)
    assert i["a"].parent is None and i["a"] not in comp
    assert i["n"].operands == [new] and i["m"].operands == [new, new]
    assert new.users == [i["n"], i["m"]]
    assert new.metadata == '{op_name="a"}' and new.attributes["sharding"] == "{replicated}"
    assert i["a"] not in i["p"].users
    verify_module(m)


def test_replacing_the_root_and_removing_dead_operands() -> None:
    m = parse_module(TEXT)
    comp = m.entry
    i = insts(m)
    comp.replace_instruction(i["r"], i["q"])
    assert comp.root is i["q"]
    names = [x.name for x in comp.instructions]
    # r and then m die and are removed; a and n stay: n still feeds the side-effecting cc
    assert names == ["p", "q", "a", "n", "cc"]
    assert i["m"].parent is None and i["r"].parent is None
    verify_module(m)


def test_parameters_and_side_effecting_operands_are_never_removed() -> None:
    m = parse_module(TEXT)
    comp = m.entry
    i = insts(m)
    comp.replace_instruction(i["r"], i["m"])
    assert i["p"] in comp and i["q"] in comp and i["cc"] in comp


def test_the_removed_instruction_itself_may_have_a_side_effect() -> None:
    """XLA: `item->HasSideEffect() && item != instruction` -- only operands are kept for
    their side effect; the instruction asked for goes, and its dead operands after it."""
    m = parse_module(TEXT.replace("ROOT r = s32[4] subtract(m, n)", "ROOT r = s32[4] negate(m)"))
    comp = m.entry
    i = insts(m)
    comp.remove_instruction_and_unused_operands(i["cc"])
    assert i["cc"] not in comp and i["n"] not in comp
    assert i["a"] in comp and i["p"] in comp
    verify_module(m)


DEAD = """HloModule dead, replica_count=2
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
ENTRY e {
  p = s32[] parameter(0)
  before = s32[] negate(p)
  ordered = s32[] negate(p), control-predecessors={before}
  first = s32[] abs(p)
  later = s32[] sign(p), control-predecessors={first}
  cl = s32[] all-reduce(p), replica_groups={}, constrain_layout=true, to_apply=add
  ch = s32[] all-reduce(p), channel_id=1, replica_groups={}, to_apply=add
  plain = s32[] all-reduce(p), replica_groups={}, to_apply=add
  t = (s32[], s32[], s32[], s32[], s32[]) tuple(ordered, first, cl, ch, plain)
  ROOT r = s32[] add(later, before)
}
"""


def test_dead_operands_with_control_dependencies_or_side_effects_are_kept() -> None:
    m = parse_module(DEAD)
    comp = m.entry
    i = insts(m)
    comp.remove_instruction_and_unused_operands(i["t"])
    kept = {x.name for x in comp.instructions}
    # ordered has a control predecessor, first a control successor: both stay; cl
    # (constrain_layout) and ch (channel_id) have side effects; plain is removed
    assert {"ordered", "first", "cl", "ch"} <= kept
    assert "plain" not in kept and "t" not in kept
    verify_module(m)


def test_has_side_effect_follows_xla() -> None:
    m = parse_module(DEAD)
    i = insts(m)
    assert i["cl"].has_side_effect() and i["ch"].has_side_effect()
    assert not i["plain"].has_side_effect() and not i["ordered"].has_side_effect()
    m2 = parse_module(TEXT)
    assert insts(m2)["cc"].has_side_effect() and not insts(m2)["a"].has_side_effect()


def test_instruction_with_control_dependencies_is_not_removed_or_replaced() -> None:
    m = parse_module(DEAD)
    comp = m.entry
    i = insts(m)
    assert comp.replace_instruction(i["ordered"], i["p"]) is False
    assert i["ordered"] in comp and i["t"].operands[0] is i["ordered"]
    assert comp.replace_instruction(i["first"], i["p"]) is False
    assert comp.replace_instruction(i["plain"], i["p"]) is True
    assert i["plain"] not in comp and i["t"].operands[4] is i["p"]
    comp.remove_instruction_and_unused_operands(i["t"])
    assert i["ordered"] in comp and i["first"] in comp
    verify_module(m)


def test_remove_instruction_refuses_used_or_root() -> None:
    m = parse_module(TEXT)
    i = insts(m)
    with pytest.raises(VerifyError, match="still used by n, m"):
        m.entry.remove_instruction(i["a"])
    with pytest.raises(VerifyError, match="root"):
        m.entry.remove_instruction(i["r"])


def test_replace_requires_compatible_shapes() -> None:
    m = parse_module(TEXT)
    i = insts(m)
    scalar = m.entry.add_instruction(HloInstruction.create(
        HloOpcode.CONSTANT, Shape.array(PrimitiveType.S32, ()), literal=7))
    with pytest.raises(VerifyError, match="shapes differ"):
        m.entry.replace_instruction(i["a"], scalar)


def test_post_order_and_printing_after_out_of_order_insertion() -> None:
    m = parse_module(TEXT)
    comp = m.entry
    i = insts(m)
    late = comp.add_instruction(HloInstruction.create(
        HloOpcode.NEGATE, i["p"].shape, [i["p"]]), "late")
    i["n"].replace_operand_with(0, late)
    order = [x.name for x in comp.post_order()]
    assert order.index("late") < order.index("n")
    assert order[-1] in ("r", "cc")
    text = print_module(m)
    assert text.index("%late =") < text.index("%n =")
    verify_module(parse_module(text))


def test_unique_names() -> None:
    m = parse_module(TEXT)
    assert m.unique_name("a") == "a.1"
    assert m.claim_name("a") == "a.1" and m.claim_name("a") == "a.2"
    assert m.unique_name("fresh") == "fresh"
    assert m.unique_computation_name("e") == "e.1"
