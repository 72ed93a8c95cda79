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


def test_parameters_and_side_effects_are_never_removed() -> None:
    m = parse_module(TEXT)
    comp = m.entry
    i = insts(m)
    comp.remove_instruction_and_unused_operands(i["cc"])
    assert i["cc"] in comp
    comp.replace_instruction(i["r"], i["m"])
    assert i["p"] in comp and i["q"] in comp


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
