"""OpExpanderPass on the edges XLA handles specially: control dependencies, scheduled
modules, original values (`origin=`), async computations and dead-operand removal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tilecc.errors import VerifyError
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.verifier import verify_module
from tilecc.passes.pass_base import build_pipeline

PASSES = ["decompose-int-all-reduce", "decompose-scalar-reduce"]
ADD = """add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
"""
# an all-reduce with a control predecessor (n) and a control successor (m)
CTRL = "HloModule ctrl, replica_count=4\n" + ADD + """
ENTRY e {
  p = s32[] parameter(0)
  n = s32[] negate(p)
  ar = s32[] all-reduce(p), replica_groups={}, to_apply=add, control-predecessors={n}
  m = s32[] multiply(p, p), control-predecessors={ar}
  ROOT out = (s32[], s32[], s32[]) tuple(ar, n, m)
}
"""
# only a control predecessor
CTRL2 = "HloModule ctrl2, replica_count=4\n" + ADD + """
ENTRY e {
  p = s32[] parameter(0)
  n = s32[] negate(p)
  ar = s32[] all-reduce(p), replica_groups={}, to_apply=add, control-predecessors={n}
  ROOT out = (s32[], s32[]) tuple(ar, n)
}
"""
SCHED = """HloModule sched, is_scheduled=true, replica_count=4

mx {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] maximum(a, b)
}
""" + ADD + """
ENTRY e {
  p = s32[] parameter(0)
  q = s32[2,128] parameter(1)
  z = s32[] constant(0)
  r = s32[] reduce(q, z), dimensions={0,1}, to_apply=mx
  ar = s32[] all-reduce(p), replica_groups={}, to_apply=add
  s = s32[] add(r, ar)
  ROOT t = (s32[], s32[]) tuple(s, r)
}
"""
ORIGIN = "HloModule cl, replica_count=4\n" + ADD + """
ENTRY e {
  p = s32[] parameter(0)
  ar1 = s32[] all-reduce(p), replica_groups={{0,1,2,3}}, constrain_layout=true, to_apply=add, origin={{"x"}}
  ROOT ar2 = s32[] all-reduce(ar1), replica_groups={{0,1,2,3}}, to_apply=add
}
"""
ASYNC = "HloModule asy, replica_count=4\n" + ADD + """
wrapped {
  x = s32[] parameter(0)
  ROOT y = s32[] all-reduce(x), replica_groups={}, to_apply=add
}, execution_thread="side"

ENTRY e {
  p = s32[] parameter(0)
  st = ((s32[]), s32[], s32[]) async-start(p), calls=wrapped
  ROOT dn = s32[] async-done(st)
}
"""


def run(text: str, verify: bool = True) -> tuple[str, list[tuple[str, bool]]]:
    module = parse_module(text)
    results = build_pipeline(PASSES, verify=verify).run(module)
    return print_module(module), results


@pytest.mark.parametrize("text", [CTRL, CTRL2], ids=["pred-and-succ", "pred-only"])
def test_control_dependencies_leave_the_all_reduce_untouched(text: str) -> None:
    """XLA's ReplaceInstruction skips an instruction with control dependencies; tilecc
    also drops the unused expansion, so the module is exactly as before, the edges stay,
    nothing is reported as changed, and a second run is a no-op too."""
    before = print_module(parse_module(text))
    once, results = run(text)
    assert once == before and results == [(p, False) for p in PASSES]
    assert "control-predecessors={%n}" in once and " all-reduce(" in once
    assert " all-gather(" not in once and "%reshape" not in once
    if text is CTRL:
        assert "multiply(%p, %p), control-predecessors={%ar}" in once
    twice, results2 = run(once)
    assert twice == once and results2 == [(p, False) for p in PASSES]


def test_control_dependent_match_does_not_block_the_others() -> None:
    text = CTRL.replace("ROOT out = (s32[], s32[], s32[]) tuple(ar, n, m)",
                        "ar2 = s32[] all-reduce(n), replica_groups={}, to_apply=add\n"
                        "  ROOT out = (s32[], s32[], s32[], s32[]) tuple(ar, n, m, ar2)")
    out, results = run(text)
    assert results[0] == ("decompose-int-all-reduce", True)
    module = parse_module(out)
    reduces = [i.name for i in module.entry if i.opcode is HloOpcode.ALL_REDUCE]
    assert reduces == ["ar"]
    assert len([i for i in module.entry if i.opcode is HloOpcode.ALL_GATHER]) == 1


def stored_names(text: str) -> list[str]:
    return re.findall(r"^\s*(?:ROOT )?%?([\w.\-]+) = ", text.split("ENTRY", 1)[1], re.M)


def assert_relative_order_kept(before: list[str], after: list[str]) -> None:
    kept = [n for n in before if n in set(after)]
    assert [n for n in after if n in set(before)] == kept


def test_scheduled_module_keeps_source_order_and_places_new_before_first_user() -> None:
    out, results = run(SCHED)
    assert all(changed for _, changed in results)
    names = stored_names(out)
    assert names[:3] == ["p", "q", "z"] and names[-2:] == ["s", "t"]
    assert_relative_order_kept(stored_names(SCHED), names)
    # the scalar-reduce chain comes before the all-reduce chain (s uses r's result first)
    assert names.index("reshape.2") < names.index("reshape") < names.index("s")
    verify_module(parse_module(out))


def test_scheduled_fixture_keeps_untouched_instructions_in_order() -> None:
    path = Path(__file__).resolve().parents[1] / "fixtures" / "hlo" / "programs" \
        / "xla_features.long.hlo"
    text = path.read_text()
    out, results = run(text, verify=False)  # XLA's verifier refuses it (async two_step)
    assert any(changed for _, changed in results)
    for comp_text_before, comp_text_after in zip(text.split("\n\n"), out.split("\n\n")):
        before = re.findall(r"^\s*(?:ROOT )?%([\w.\-]+) = ", comp_text_before, re.M)
        after = re.findall(r"^\s*(?:ROOT )?%([\w.\-]+) = ", comp_text_after, re.M)
        assert_relative_order_kept(before, after)
    entry_before = stored_names(text)
    entry_after = stored_names(out)
    assert len(entry_after) > len(entry_before) - 2  # the rewrites added instructions
    assert_relative_order_kept(entry_before, entry_after)


def test_unscheduled_module_still_prints_in_post_order() -> None:
    out, _ = run(SCHED.replace("is_scheduled=true, ", ""))
    names = stored_names(out)
    assert names == [i.name for i in parse_module(out).entry.post_order()]
    assert names[:2] == ["q", "reshape.2"]  # XLA's post-order from the root: p moves


def test_original_value_moves_to_the_replacement() -> None:
    out, _ = run(ORIGIN)
    module = parse_module(out)
    carriers = [i for i in module.entry if "origin" in i.attributes]
    assert [(i.opcode, i.attributes["origin"]) for i in carriers] == \
        [(HloOpcode.RESHAPE, '{{"x"}}')]
    # the carrier is ar1's replacement: the reshape that feeds the second decomposition
    assert carriers[0].users and carriers[0].users[0].opcode is HloOpcode.RESHAPE
    assert "constrain_layout=true" in out  # carried onto ar1's all-gather


def test_async_computations_are_skipped_and_expanding_them_is_a_verify_error() -> None:
    out, results = run(ASYNC)
    assert results == [(p, False) for p in PASSES]
    assert "ROOT %y = s32[] all-reduce(%x)" in out
    broken = ASYNC.replace("ROOT y = s32[] all-reduce(x)",
                           "n = s32[] negate(x)\n  ROOT y = s32[] all-reduce(n)")
    with pytest.raises(VerifyError, match="asynchronous computation wrapped expected to "
                                          "contain only the root and parameter instructions, "
                                          "also has n"):
        verify_module(parse_module(broken))


def test_async_skip_leaves_other_computations_rewritten() -> None:
    text = ASYNC.replace("ROOT dn = s32[] async-done(st)",
                         "dn = s32[] async-done(st)\n"
                         "  ROOT ar = s32[] all-reduce(dn), replica_groups={}, to_apply=add")
    out, results = run(text)
    assert results[0] == ("decompose-int-all-reduce", True)
    module = parse_module(out)
    assert module.entry.root.opcode is HloOpcode.RESHAPE
    wrapped = module.computation_by_name("wrapped")
    assert wrapped.root.opcode is HloOpcode.ALL_REDUCE
