"""Corner forms of XLA's own test modules: what XLA's parser (jaxlib 0.10.2) reads -- tuple
constants, inline computation bodies, NaN payloads, one scalar for an array, `f32[?]`, a
spaced layout, multi-line recovery-table strings, the shapes it builds for send /
send-done -- and what it refuses (tilecc.hlo.parse_rules_attrs, layouts, result shapes)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tilecc.errors import ParseError, VerifyError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.verifier import verify_module


def entry(*lines: str, params: str = "  p = f32[4,8] parameter(0)\n") -> str:
    return "HloModule m\nENTRY e {\n" + params + "".join(f"  {ln}\n" for ln in lines) + "}\n"


CONV = ("input = f32[1,2,1] parameter(1)", "filter = f32[1,1,1] parameter(2)",
        "ROOT c = f32[1,2,1] convolution(input, filter), window={size=1}, dim_labels=")
ASYNC_TWICE = """HloModule m
w {
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a)
}
ENTRY e {
  p = f32[2] parameter(0)
  s0 = ((f32[2]), f32[2], s32[]) async-start(p), calls=w
  d0 = f32[2] async-done(s0)
  s1 = ((f32[2]), f32[2], s32[]) async-start(d0), calls=w
  ROOT d1 = f32[2] async-done(s1)
}
"""
COND = """HloModule m
b0 {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}
b1 {
  x = f32[] parameter(0)
  ROOT y = f32[] abs(x)
}
ENTRY e {
  p = f32[] parameter(0)
  k = pred[] parameter(1)
  ROOT c = f32[] conditional(k, p, p), branch_computations={b0, b1}
}
"""


@pytest.mark.parametrize("text, fragment", [
    (entry(*CONV[:2], CONV[2] + "9?_io->bf"), "one digit per spatial dimension"),
    (entry(*CONV[:2], CONV[2] + "b0f_io->bf"), "same number of spatial dimensions, but got 1, 0, 0"),
    (entry(*CONV[:2], CONV[2].replace("size=1}", "pad=1_1_0 size=1}") + "b0f_0io->b0f"),
     "padding_low and padding_high separated by '_'"),
    (entry("ROOT c = f32[4,8] copy(p), sharding={devices=[2,2]0,1,2,3,4}"), "needs 4 device ids, got 5"),
    (entry("ROOT c = f32[4,8] copy(p), sharding={mesh['x'=2], [{}, {}], unreduced=max{'x'}}"),
     "unreduced=<kind>"),
    (entry("ROOT t = (f32[4,2], s32[4,2]) topk(p), k=2, largest=true, is_stable=true"),
     'unexpected attribute "is_stable"'),
    (entry("ROOT b = f32[4,8] collective-broadcast(p), replica_groups={}, has_dynamic_root=true"),
     'unexpected attribute "has_dynamic_root"'),
    (ASYNC_TWICE, "computation w is called by more than one async op"),
    (COND, "a conditional on a pred takes true_computation"),
    (entry("ROOT r = f32[4,8]{1,0:D(X,C)} copy(p)"), "expected a DimLevelType abbreviation"),
    (entry("ROOT r = f32[4,8]{1,0:T(8,128)P(f32[4,8])} copy(p)"), "not for a sparse array"),
    ("HloModule m\nENTRY e () -> f32[1] {\n  ROOT c = f32[2] constant({1, 2})\n}\n",
     "is not compatible with that of its root 'c', f32[2]"),
    (entry("ROOT c = bf16[1] constant({nan(0x3ff)})"), "NaN payload 0x3ff is out of range (0x7f)"),
    (entry("ROOT c = f8e4m3fn[1] constant({nan(0x1)})"), "f8e4m3fn does not support payloads"),
    (entry("ROOT c = (f32[], f32[2]) constant((1, {2}))"), "dimension 0 has 1 elements"),
    (entry("ROOT c = f32[0] constant(5)"), "sets element 0, which is out of range"),
])
def test_refused_as_xla_refuses(text: str, fragment: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_module(text)
    assert fragment in info.value.message, info.value.message


def test_newer_attribute_names_are_refused_only_where_that_xla_lacks_them() -> None:
    parse_module(entry("ROOT s = f32[4,8] sort(p), dimensions={1}, is_stable=true, to_apply=lt",
                       params="  p = f32[4,8] parameter(0)\n")
                 .replace("ENTRY e", "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                          "  ROOT c = pred[] compare(a, b), direction=LT\n}\nENTRY e"))
    parse_module(entry("ROOT c = f32[4,8] copy(p), sharding={mesh['x'=2] [{},{}], unreduced={'x'}}"))


def test_tuple_constants_read_verify_and_run() -> None:
    text = entry("ROOT c = ((f32[2,1], s32[]), f32[2]) constant((( { {1}, {2} }, -3), {2, 42}))",
                 params="")
    module = parse_module(text)
    verify_module(module)
    assert "constant((( { {1}, {2} }, -3), {2, 42}))" in print_module(module)
    out = evaluate_module(module, [], 1)
    assert [o.tolist() for o in out] == [[[[1.0], [2.0]]], [-3], [[2.0, 42.0]]]


def test_one_scalar_is_an_arrays_first_element_and_nan_payloads_keep_their_sign() -> None:
    # XLA's parser reads `s32[2,3] constant(-4)` as {{-4, 0, 0}, {0, 0, 0}} (it prints so)
    c = parse_module(entry("ROOT c = s32[2,3] constant(-4)", params="")).entry.root
    assert c is not None and c.literal is not None
    assert c.literal.tolist() == [[-4, 0, 0], [0, 0, 0]]
    t = parse_module(entry("ROOT c = pred[3] constant(true)", params="")).entry.root
    assert t is not None and t.literal is not None and t.literal.tolist() == [True, False, False]
    n = parse_module(entry("ROOT c = bf16[2] constant({-nan(0x7f), nan(0x1)})", params=""))
    assert n.entry.root is not None and n.entry.root.literal is not None
    values = n.entry.root.literal.astype(np.float32)
    assert all(math.isnan(v) for v in values) and np.signbit(values).tolist() == [True, False]
    assert "constant({-nan(0x7f), nan(0x1)})" in print_module(n)


def test_unbounded_and_spaced_layout_shapes() -> None:
    m = parse_module(entry("ROOT r = f32[3] reshape(a)", params="  a = f32[?] parameter(0)\n"))
    assert "f32[?]{0} parameter(0)" in print_module(m)
    s = parse_module(entry("ROOT n = f32[4,8] {0,1} negate(p)")).entry.root
    assert s is not None and s.shape.layout is not None and s.shape.layout.minor_to_major == (0, 1)


def test_inline_bodies_are_computations_named_and_placed_as_xla_does() -> None:
    text = """HloModule m
ENTRY main {
  p0 = f32[] parameter(0)
  ROOT c = f32[] call(p0), to_apply={
    p0 = f32[] parameter(0)
    ROOT n = f32[] negate(p0)
  }
}
"""
    module = parse_module(text)
    callee, main = module.computations
    assert callee.name == "_" and main is module.entry
    # XLA names a computation's instructions when it is complete: the callee keeps p0
    assert [i.name for i in callee.instructions] == ["p0", "n"]
    assert main.parameters[0].name == "p0.1"
    assert "to_apply=%_" in print_module(module)
    assert evaluate_module(module, [np.array([2.5], np.float32)], 1)[0].tolist() == [-2.5]


def test_recovery_table_strings_may_span_lines() -> None:
    table = '{\n  {"c"} : {"c2"},\n  "\n    HloModule r\n    ENTRY e {\n  ROOT p = s32[] ' \
            'parameter(0)\n    }\n  "\n}'
    module = parse_module(f"HloModule m, origin_recovery_table={table}\n\n"
                          "ENTRY e {\n  ROOT c = s32[] constant(1)\n}\n")
    assert module.header_attributes["origin_recovery_table"] == table


def test_send_shapes_are_built_as_xla_builds_them() -> None:
    module = parse_module(entry(
        "s = (f32[4,8], u32[], token[]) send(tok, p), channel_id=1",
        "ROOT d = (f32[4,8], token[]) send-done(s), channel_id=1",
        params="  p = f32[4,8] parameter(0)\n  tok = token[] after-all()\n"))
    send, done = module.entry.instructions[-2:]
    assert send.shape.to_text() == "(token[], u32[], token[])"  # operand 0 decides
    assert done.shape.to_text() == "token[]"


def test_iota_groups_of_the_wrong_size_are_read_and_refused_by_the_verifier() -> None:
    module = parse_module(entry("ROOT g = f32[8,8] all-gather(p), dimensions={0}, "
                                "replica_groups=[2,2]<=[16]"))
    with pytest.raises(VerifyError, match=r"\[2,2\] need 4 ids but dims \[16\] give 16"):
        verify_module(module)
