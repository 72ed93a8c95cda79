"""Stamped expansions (tilecc.passes.expansion_template) equal the builders' ones, and the
matches come in XLA's post-order whichever way the driver orders them.

Every golden case, fixture, random module (and the XLA corpus when ../shared has it), both
passes in both orders: the module after the template path prints byte for byte as after
the builder path (each match rewritten by `build_expansion` directly), with the same
changed flags, the same names claimed, and it verifies when the input did.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tilecc.errors import TileccError
from tilecc.hlo.builders import make_broadcast
from tilecc.hlo.ir import HloModule
from tilecc.hlo.parser import parse_module
from tilecc.hlo.post_order import dependency_chain
from tilecc.hlo.printer import print_module
from tilecc.hlo.verifier import verify_module
from tilecc.passes.decompose_int_all_reduce import DecomposeIntAllReduce
from tilecc.passes.decompose_scalar_reduce import DecomposeScalarReduce
from tilecc.passes.expansion_template import trace
from tilecc.passes.pass_base import OpExpanderPass

from .golden_io import golden_cases
from .random_modules import random_module_text
from .test_pass_base import reference_post_order

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "hlo").rglob("*.hlo"))
CORPUS = ROOT.parent / "shared" / "xla-hlo-tests" / "modules"
PASSES: tuple[type[OpExpanderPass], ...] = (DecomposeIntAllReduce, DecomposeScalarReduce)


def built(cls: type[OpExpanderPass]) -> OpExpanderPass:
    """The pass with every match rewritten by its builders, no template."""
    hlo_pass = cls()
    hlo_pass.expand_instruction = hlo_pass.build_expansion  # type: ignore[method-assign]
    return hlo_pass


def outcome(text: str, passes: list[OpExpanderPass]) -> tuple[str, list[bool], set[str]]:
    module = parse_module(text)
    try:
        verify_module(module)
        valid = True
    except TileccError:
        valid = False  # the corpus and some fixtures hold modules the verifier refuses
    try:
        changed = [p.run(module) for p in passes]
    except TileccError as err:
        return f"error: {err}", [], set()
    if valid:
        verify_module(module)
    return print_module(module), changed, module._names.names


def texts() -> list[str]:
    out = [c.text for c in golden_cases()] + [random_module_text(s)[0] for s in range(300)]
    out += [p.read_text() for p in FIXTURES]
    if CORPUS.is_dir():
        out += [p.read_text() for p in sorted(CORPUS.glob("*.hlo"))]
    return out


def test_stamped_expansions_equal_built_ones_everywhere() -> None:
    compared = 0
    for text in texts():
        try:
            parse_module(text)
        except TileccError:
            continue  # the corpus holds modules tilecc refuses; not this test's business
        for order in (PASSES, PASSES[::-1]):
            stamped = outcome(text, [cls() for cls in order])
            assert stamped == outcome(text, [built(cls) for cls in order]), text[:200]
            compared += stamped[1].count(True)
    assert compared > 300  # rewrites happened, not only "no change"


def test_one_trace_per_key() -> None:
    """A template is traced once per key and run; every match with the key is stamped."""
    lines = ["HloModule m, replica_count=2", "add {", "  a = s32[] parameter(0)",
             "  b = s32[] parameter(1)", "  ROOT s = s32[] add(a, b)", "}", "ENTRY e {",
             "  p = s32[] parameter(0)"]
    for i in range(6):
        lines.append(f"  r{i} = s32[] all-reduce(p), replica_groups={{}}, to_apply=add")
    lines.append("  ROOT t = (" + ", ".join(["s32[]"] * 6) + ") tuple("
                 + ", ".join(f"r{i}" for i in range(6)) + ")\n}\n")
    module = parse_module("\n".join(lines))
    hlo_pass = DecomposeIntAllReduce()
    traced: list[str] = []
    original = trace

    def counting(match, build):  # type: ignore[no-untyped-def]
        traced.append(match.name)
        return original(match, build)

    import tilecc.passes.pass_base as pass_base
    pass_base.trace = counting  # type: ignore[assignment]
    try:
        assert hlo_pass.run(module) is True
    finally:
        pass_base.trace = original
    assert traced == ["r0"]
    assert not hlo_pass._templates  # dropped after the run (they hold the module's reducer)


def test_a_template_error_names_the_match() -> None:
    text = """HloModule m, replica_count=2
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  p = s32[] parameter(0)
  q = s32[] parameter(1)
  ROOT bad = s32[] all-reduce(p, q), replica_groups={}, to_apply=add
}
"""
    with pytest.raises(TileccError, match="bad: an array-shaped all-reduce takes one operand"):
        DecomposeIntAllReduce().run(parse_module(text))


CHAINED = """HloModule m
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  p = s32[4,32] parameter(0)
  z = s32[] constant(0)
  r1 = s32[] reduce(p, z), dimensions={0,1}, to_apply=max
  b1 = s32[4,32] broadcast(r1), dimensions={}
  r2 = s32[] reduce(b1, z), dimensions={0,1}, to_apply=max
  b2 = s32[4,32] broadcast(r2), dimensions={}
  r3 = s32[] reduce(b2, z), dimensions={0,1}, to_apply=max
  ROOT t = (s32[], s32[]) tuple(r3, r1)
}
"""


def _members(module: HloModule, *names: str) -> set:
    return {module.entry.instruction_by_name(n) for n in names}


def test_a_dependency_chain_is_ordered_without_a_dfs() -> None:
    module = parse_module(CHAINED)
    chain = dependency_chain(module.entry, _members(module, "r1", "r2", "r3"))
    assert chain is not None and [i.name for i in chain] == ["r1", "r2", "r3"]
    hits = set(chain)
    assert chain == [i for i in reference_post_order(module.entry) if i in hits]


def test_no_chain_gives_none() -> None:
    module = parse_module(CHAINED)
    # two members neither of which depends on the other
    assert dependency_chain(module.entry, _members(module, "p", "z")) is None
    # any instruction can be a member: b2 reads r2
    assert [i.name for i in dependency_chain(module.entry, _members(module, "r2", "b2"))
            or ()] == ["r2", "b2"]
    # a user stored before its operand (what a pass appends) hides the dependency: None,
    # never a wrong order
    moved = parse_module(CHAINED)
    r1, r2 = (moved.entry.instruction_by_name(n) for n in ("r1", "r2"))
    r2.replace_operand_with(0, make_broadcast(r1, (), (4, 32)))  # stored after r2
    assert dependency_chain(moved.entry, {r1, r2}) is None
    assert [i.name for i in DecomposeScalarReduce().matches(moved)] == ["r1", "r2", "r3"]


def test_independent_matches_still_come_in_post_order() -> None:
    """The DFS reaches the root's last operand's match first when the root reads them
    backwards; no chain, so the driver walks."""
    text = """HloModule m
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  p = s32[4,32] parameter(0)
  z = s32[] constant(0)
  r1 = s32[] reduce(p, z), dimensions={0,1}, to_apply=max
  r2 = s32[] reduce(p, z), dimensions={1,0}, to_apply=max
  ROOT t = (s32[], s32[]) tuple(r2, r1)
}
"""
    module = parse_module(text)
    assert [i.name for i in DecomposeScalarReduce().matches(module)] == ["r2", "r1"]
