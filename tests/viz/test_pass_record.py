"""pass_record: the matches of a real jax dump, what each rewrite removed and added."""

from __future__ import annotations

from pathlib import Path

from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.passes.pass_base import lookup_pass
from tilecc.viz.pass_record import record_pass

FIXTURE = Path(__file__).parents[1] / "fixtures" / "hlo" / "psum_max.spmd.hlo"


def _opcodes(module, names):
    by_name = {i.name: i for c in module.computations for i in c.instructions}
    return [by_name[n].opcode for n in names]


def test_int_all_reduce_adds_the_gather_and_add_chain():
    info = lookup_pass("decompose-int-all-reduce")
    text = FIXTURE.read_text()
    run = record_pass(info, text)
    expected = [i.name for i in info.create().matches(run.before)]
    assert run.changed and [m.match for m in run.matches] == expected == ["psum_invariant.7"]
    (match,) = run.matches
    assert match.removed == ["psum_invariant.7"]     # its operand squeeze.3 stays in use
    ops = sorted(op.mnemonic for op in _opcodes(run.after, match.added))
    # G = 4: reshape, broadcast, all-gather, 4 pair slices, 3 adds, the lane slice, reshape
    assert ops == sorted(["reshape", "broadcast", "all-gather", *["slice"] * 5, *["add"] * 3,
                          "reshape"])
    # the after module is exactly what the pass makes of the text
    module = parse_module(text)
    info.create().run(module)
    assert print_module(module) == print_module(run.after)


def test_scalar_reduce_adds_two_reduces_and_the_barrier():
    run = record_pass(lookup_pass("decompose-scalar-reduce"), FIXTURE.read_text())
    (match,) = run.matches
    assert match.match == "reduce" and match.removed == ["reduce"]
    ops = _opcodes(run.after, match.added)
    assert sorted(o.mnemonic for o in ops) == ["maximum", "reduce", "reduce", "reshape",
                                              "reshape"]
    assert ops[0] is HloOpcode.RESHAPE           # the walk starts at the expansion's result


def test_dead_operands_count_as_removed():
    text = """HloModule m, replica_count=2

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY e {
  p = s32[1] parameter(0)
  only = s32[] reshape(p)
  ROOT ar = s32[] all-reduce(only), replica_groups={}, to_apply=add
}
"""
    run = record_pass(lookup_pass("decompose-int-all-reduce"), text)
    (match,) = run.matches
    assert match.removed == ["ar"]       # `only` still feeds the new reshape
    assert "only" in {i.name for i in run.after.entry.instructions}


def test_no_match_records_nothing():
    text = """HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
"""
    run = record_pass(lookup_pass("decompose-int-all-reduce"), text)
    assert not run.changed and run.matches == []


def test_a_match_with_control_dependencies_is_not_a_match_of_the_picture():
    text = """HloModule m, replica_count=2

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY e {
  p = s32[] parameter(0)
  n = s32[] negate(p)
  ar = s32[] all-reduce(p), replica_groups={}, to_apply=add, control-predecessors={n}
  ROOT t = (s32[], s32[]) tuple(ar, n)
}
"""
    run = record_pass(lookup_pass("decompose-int-all-reduce"), text)
    assert not run.changed and run.matches == []
