"""The post-order a pass leaves cached (tilecc.hlo.post_order) sorts as a fresh DFS does.

An expansion pass keeps its computation's cached post-order across the replacements it
checked (the next pass then orders its matches without a new DFS). For every golden case,
random module and fixture, both passes in both orders: after each pass every cached order
is the fresh post-order restricted to the instructions it holds, and post_order() is
XLA's order.
"""

from __future__ import annotations

from pathlib import Path

from tilecc.hlo.ir import HloInstruction, HloModule
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.post_order import make_post_order
from tilecc.passes.decompose_int_all_reduce import DecomposeIntAllReduce
from tilecc.passes.decompose_scalar_reduce import DecomposeScalarReduce
from tilecc.passes.pass_base import OpExpanderPass

from .golden_io import golden_cases
from .random_modules import random_module_text
from .test_pass_base import reference_post_order

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "hlo").rglob("*.hlo"))


def texts() -> list[str]:
    return ([c.text for c in golden_cases()] + [random_module_text(s)[0] for s in range(150)]
            + [p.read_text() for p in FIXTURES])


def check_cached_orders(module: HloModule) -> int:
    """Assert every cached order agrees with a fresh DFS; the number of instructions that
    were ordered by a kept (spliced) order."""
    spliced = 0
    for comp in module.computations:
        cached = comp.cached_order()
        if cached is None:
            continue
        held = set(cached)
        assert held <= set(comp.instructions), comp.name
        fresh = make_post_order(comp)
        assert cached == [i for i in fresh if i in held], comp.name
        if len(cached) < len(comp):
            spliced += len(cached)
    return spliced


def test_the_cached_order_is_the_fresh_one_on_every_fixture() -> None:
    spliced = 0
    for text in texts():
        for first, second in ((DecomposeIntAllReduce, DecomposeScalarReduce),
                              (DecomposeScalarReduce, DecomposeIntAllReduce)):
            module = parse_module(text)
            passes: list[OpExpanderPass] = [first(), second()]
            for hlo_pass in passes:
                hlo_pass.run(module)
                spliced += check_cached_orders(module)
                # what the next pass expands comes in the order a fresh DFS gives
                hits = second().matches(module)
                assert hits == [i for c in module.non_fusion_computations()
                                for i in reference_post_order(c) if i in set(hits)]
            for comp in module.computations:
                assert comp.post_order() == reference_post_order(comp), comp.name
    assert spliced > 1000  # the kept orders were exercised, not only fresh ones


class SwapOperands(OpExpanderPass):
    """subtract(a, b) -> add(b, a) (or, with `dead_too`, also any unused abs -> a new abs):
    expansions after which the DFS visits the old instructions in another order."""

    name = "swap-operands"

    def instruction_matches_pattern(self, inst: HloInstruction) -> bool:
        return inst.opcode in (HloOpcode.SUBTRACT, HloOpcode.ABS)

    def expand_instruction(self, inst: HloInstruction) -> HloInstruction | None:
        ops = inst.operands[::-1] if inst.opcode is HloOpcode.SUBTRACT else inst.operands
        opcode = HloOpcode.ADD if inst.opcode is HloOpcode.SUBTRACT else HloOpcode.ABS
        return HloInstruction.create(opcode, inst.shape, ops)


REORDERING = {
    # the DFS meets b's operands before a's once the new add reads (b, a)
    "swapped operands": """HloModule m
ENTRY e {
  p = s32[] parameter(0)
  a = s32[] negate(p)
  b = s32[] not(p)
  d = s32[] subtract(a, b)
  e = s32[] subtract(d, p)
  ROOT r = s32[] copy(e)
}
""",
    # x has no users: its expansion becomes the last DFS start instead of the first
    "unused match": """HloModule m
ENTRY e {
  p = s32[] parameter(0)
  q = s32[] negate(p)
  r = s32[] not(p)
  x = s32[] abs(q)
  y = s32[] abs(r)
  ROOT root = s32[] add(r, q)
}
""",
}


def test_an_expansion_that_reorders_the_others_drops_the_cached_order() -> None:
    for label, text in REORDERING.items():
        module = parse_module(text)
        before = [i.name for i in module.entry.post_order()]
        assert SwapOperands().run(module) is True
        assert module.entry.cached_order() is None, label
        order = module.entry.post_order()
        assert order == reference_post_order(module.entry), label
        old = [i.name for i in order if i.name in before]
        assert old != [n for n in before if n in old], label  # the order really changed
