"""The pass framework: OpExpanderPass driver semantics, PassPipeline, and the registry."""

from __future__ import annotations

import pytest

from tilecc.errors import PassError, VerifyError
from tilecc.hlo.ir import HloComputation, HloInstruction
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.types import Shape
from tilecc.passes.decompose_int_all_reduce import DecomposeIntAllReduce
from tilecc.passes.decompose_scalar_reduce import DecomposeScalarReduce
from tilecc.passes.pass_base import (PASS_REGISTRY, HloPass, OpExpanderPass, PassPipeline,
                                     build_pipeline, lookup_pass)

from .golden_io import golden_cases, run_pipeline
from .random_modules import random_module_text

MODULE = """HloModule m

fused {
  fp = s32[4] parameter(0)
  ROOT fneg = s32[4] negate(fp)
}

ENTRY main {
  p = s32[4] parameter(0)
  c = s32[4] constant({1, 2, 3, 4})
  sum = s32[4] add(p, c), metadata={op_name="sum"}
  neg = s32[4] negate(sum)
  keep = s32[4] negate(neg)
  fus = s32[4] fusion(keep), kind=kLoop, calls=fused
  ROOT out = (s32[4], s32[4]) tuple(fus, keep)
}
"""


class RebuildNegate(OpExpanderPass):
    """negate(x) -> a fresh negate(x): the replacement matches the gate again, so a driver
    that did not collect all matches first would keep expanding its own output."""

    name = "rebuild-negate"

    def __init__(self, extra_filter=None) -> None:
        super().__init__(extra_filter)
        self.expanded: list[str] = []

    def instruction_matches_pattern(self, inst: HloInstruction) -> bool:
        return inst.opcode is HloOpcode.NEGATE

    def expand_instruction(self, inst: HloInstruction) -> HloInstruction | None:
        self.expanded.append(inst.name)
        return HloInstruction.create(HloOpcode.NEGATE, inst.shape, [inst.operands[0]])


def test_collects_all_matches_before_expanding_and_skips_fusion_computations() -> None:
    module = parse_module(MODULE)
    hlo_pass = RebuildNegate()
    assert hlo_pass.run(module) is True
    assert hlo_pass.expanded == ["neg", "keep"]  # post-order; not fneg (fusion computation)
    negates = [i for c in module.computations for i in c.instructions
               if i.opcode is HloOpcode.NEGATE]
    assert len(negates) == 3


def test_extra_filter_restricts_the_matches() -> None:
    module = parse_module(MODULE)
    hlo_pass = RebuildNegate(extra_filter=lambda inst: inst.name == "keep")
    assert hlo_pass.run(module) is True
    assert hlo_pass.expanded == ["keep"]


class AddToCopy(OpExpanderPass):
    """add(p, c) -> copy(p): the constant becomes dead and must disappear."""

    name = "add-to-copy"

    def instruction_matches_pattern(self, inst: HloInstruction) -> bool:
        return inst.opcode is HloOpcode.ADD

    def expand_instruction(self, inst: HloInstruction) -> HloInstruction | None:
        return HloInstruction.create(HloOpcode.COPY, inst.shape, [inst.operands[0]])


def test_replacement_removes_dead_operands_keeps_parameters_and_gets_metadata() -> None:
    module = parse_module(MODULE)
    assert AddToCopy().run(module) is True
    names = [i.name for i in module.entry.instructions]
    assert "sum" not in names and "c" not in names and "p" in names
    copy = module.entry.instruction_by_name("neg").operands[0]
    assert copy.opcode is HloOpcode.COPY and copy.operands[0].name == "p"
    assert copy.metadata == '{op_name="sum"}'


class Declines(OpExpanderPass):
    name = "declines"

    def instruction_matches_pattern(self, inst: HloInstruction) -> bool:
        return inst.opcode is HloOpcode.NEGATE

    def expand_instruction(self, inst: HloInstruction) -> HloInstruction | None:
        return None


def test_expansion_returning_none_is_no_change() -> None:
    module = parse_module(MODULE)
    before = print_module(module)
    assert Declines().run(module) is False
    assert print_module(module) == before


class BreaksShapes(HloPass):
    name = "breaks-shapes"

    def run(self, module) -> bool:
        neg = module.entry.instruction_by_name("neg")
        neg.shape = Shape.array(neg.shape.element_type, (5,))
        return True


def test_pipeline_verifies_after_every_pass_and_names_the_pass() -> None:
    module = parse_module(MODULE)
    with pytest.raises(VerifyError, match="after pass breaks-shapes"):
        PassPipeline([Declines(), BreaksShapes()], verify=True).run(module)


def test_pipeline_rejects_an_invalid_input_module() -> None:
    module = parse_module(MODULE)
    neg = module.entry.instruction_by_name("neg")
    neg.shape = Shape.array(neg.shape.element_type, (7,))
    with pytest.raises(VerifyError, match="input module"):
        PassPipeline([Declines()], verify=True).run(module)


def test_pipeline_dumps_before_and_after_each_pass(tmp_path) -> None:
    module = parse_module(MODULE)
    results = PassPipeline([AddToCopy(), Declines()], dump_dir=tmp_path / "d").run(module)
    assert results == [("add-to-copy", True), ("declines", False)]
    files = sorted(p.name for p in (tmp_path / "d").iterdir())
    assert files == ["01-add-to-copy.after.hlo", "01-add-to-copy.before.hlo",
                     "02-declines.after.hlo", "02-declines.before.hlo"]
    assert "add(" in (tmp_path / "d" / "01-add-to-copy.before.hlo").read_text()
    assert "add(" not in (tmp_path / "d" / "01-add-to-copy.after.hlo").read_text()
    assert parse_module((tmp_path / "d" / "02-declines.after.hlo").read_text())


def test_registry_matches_the_spec() -> None:
    table = {(i.cli_name, i.spec_name, i.registry_order, i.pass_class()) for i in PASS_REGISTRY}
    assert table == {
        ("decompose-int-all-reduce", "aws_neuron_decompose_int_all_reduce", 88,
         DecomposeIntAllReduce),
        ("decompose-scalar-reduce", "aws_neuron_decompose_scalar_reduce", 74,
         DecomposeScalarReduce),
    }
    assert lookup_pass("aws_neuron_decompose_scalar_reduce").cli_name == "decompose-scalar-reduce"
    assert [p.name for p in build_pipeline(["aws_neuron_decompose_int_all_reduce",
                                            "decompose-scalar-reduce"]).passes] == \
        ["decompose-int-all-reduce", "decompose-scalar-reduce"]


def test_unknown_pass_lists_the_valid_ones() -> None:
    with pytest.raises(PassError) as err:
        lookup_pass("decompose-everything")
    message = str(err.value)
    assert "decompose-everything" in message
    for info in PASS_REGISTRY:
        assert info.cli_name in message and info.spec_name in message


def reference_post_order(comp: HloComputation) -> list[HloInstruction]:
    """XLA's MakeInstructionPostOrder written plainly: DFS from every instruction without
    users (then every instruction) in stored order, each node pushed as (node, expanded)."""
    visited: set[int] = set()
    order: list[HloInstruction] = []
    insts = comp.instructions
    for start in [i for i in insts if not i.users and not i.control_successors] + insts:
        stack = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
            elif id(node) not in visited:
                visited.add(id(node))
                stack.append((node, True))
                stack.extend((d, False) for d in reversed([*node.operands,
                                                          *node.control_predecessors]))
    return order


def test_post_order_is_xlas_make_instruction_post_order() -> None:
    texts = [c.text for c in golden_cases()] + [random_module_text(s)[0] for s in range(150)]
    rewritten = [run_pipeline(c.text, c.passes)[0] for c in golden_cases()]
    modules = [parse_module(t) for t in texts] + rewritten + [parse_module(MODULE)]
    compared = 0
    for module in modules:
        for comp in module.computations:
            assert comp.post_order() == reference_post_order(comp), comp.name
            compared += len(comp)
    assert compared > 2500


def test_post_order_follows_control_predecessors() -> None:
    text = MODULE.replace("keep = s32[4] negate(neg)", "keep = s32[4] negate(neg), "
                          "control-predecessors={c}")
    module = parse_module(text)
    order = module.entry.post_order()
    assert order == reference_post_order(module.entry)
    assert order.index(module.entry.instruction_by_name("c")) < \
        order.index(module.entry.instruction_by_name("keep"))


def test_gate_opcodes_never_hide_a_match() -> None:
    """The opcode prefilter is exact: every instruction a gate accepts has one of its opcodes."""
    passes = [DecomposeIntAllReduce(), DecomposeScalarReduce()]
    accepted = 0
    for text in [c.text for c in golden_cases()] + [random_module_text(s)[0] for s in range(60)]:
        module = parse_module(text)
        for comp in module.computations:
            for inst in comp:
                for p in passes:
                    if p.instruction_matches_pattern(inst):
                        accepted += 1
                        assert p.gate_opcodes is not None and inst.opcode in p.gate_opcodes
    assert accepted > 20
