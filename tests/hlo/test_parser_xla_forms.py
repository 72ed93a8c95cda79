"""Forms XLA's parser reads that XLA's printer never writes: left-out result shapes,
instructions nested as operands, attribute values over several lines, comments anywhere,
a computation without ROOT, `HloModule name:`, broadcast without dimensions."""

from __future__ import annotations

import time

import pytest

from tilecc.errors import ParseError
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module


def body(text: str) -> str:
    """The printed entry's instruction lines."""
    lines = print_module(parse_module(text)).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("ENTRY"))
    return "\n".join(lines[start + 1:lines.index("}", start)])


def test_left_out_shapes_are_inferred() -> None:
    text = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = add(a, b)
}
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  c = c64[2] parameter(1)
  n = negate(p)
  k = compare(p, n), direction=LT
  m = abs(c)
  t = tuple(n, k)
  g = get-tuple-element(t), index=1
  tok = after-all()
  z = f32[] constant(0)
  r = reduce(p, z), dimensions={1}, to_apply=add
  d = dot(p, p), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT cl = call(z, z), to_apply=add
}
"""
    assert body(text) == """\
  %p = f32[2,3]{0,1} parameter(0)
  %c = c64[2]{0} parameter(1)
  %n = f32[2,3]{0,1} negate(%p)
  %k = pred[2,3]{0,1} compare(%p, %n), direction=LT
  %m = f32[2]{0} abs(%c)
  %t = (f32[2,3]{0,1}, pred[2,3]{0,1}) tuple(%n, %k)
  %g = pred[2,3]{0,1} get-tuple-element(%t), index=1
  %tok = token[] after-all()
  %z = f32[] constant(0)
  %r = f32[2]{0} reduce(%p, %z), dimensions={1}, to_apply=%add
  %d = f32[3,3]{1,0} dot(%p, %p), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT %cl = f32[] call(%z, %z), to_apply=%add"""


@pytest.mark.parametrize("line, message", [
    ("c = constant(0)", "expected a shape such as s32[2,3] before constant"),
    ("c = convert(p)", "convert changes the element type: write the result shape"),
    ("c = add(p, q)", "have different dimensions"),
    ("c = broadcast(p), dimensions={}", "XLA does not infer the shape of broadcast"),
])
def test_shapes_xla_does_not_infer_are_refused(line: str, message: str) -> None:
    text = f"HloModule m\nENTRY e {{\n  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n" \
           f"  ROOT {line}\n}}\n"
    with pytest.raises(ParseError) as info:
        parse_module(text)
    assert message in info.value.message and info.value.line == 5


def test_nested_instructions_are_named_as_xla_names_them() -> None:
    text = """HloModule m
ENTRY e {
  ROOT r = add(f32[4] parameter(0), multiply(f32[4] parameter(1), f32[4] parameter(2)))
}
"""
    assert body(text) == """\
  %parameter.anon = f32[4]{0} parameter(0)
  %parameter.anon.1 = f32[4]{0} parameter(1)
  %parameter.anon.2 = f32[4]{0} parameter(2)
  %multiply.anon = f32[4]{0} multiply(%parameter.anon.1, %parameter.anon.2)
  ROOT %r = f32[4]{0} add(%parameter.anon, %multiply.anon)"""


def test_values_over_lines_comments_and_no_root() -> None:
    text = """HloModule m:
ENTRY e {
  p = f32[] parameter(0) // CHECK: %x = f32[] add(%a, %b), to_apply=%foo, sharding={maximal device=0}
  // another, channel_id=3
  b = f32[2]{0} broadcast(p), frontend_attributes={
      a="1",
      b="2"}
  n = f32[2] negate(b), backend_config={"x":{"n":"1"},
                                         "y":2}
}
"""
    module = parse_module(text)
    p, b, n = module.entry.instructions  # type: ignore[union-attr]
    assert p.attributes == {} and p.channel_id is None
    assert b.dimensions == () and b.attributes["frontend_attributes"].startswith("{\n")
    assert module.entry.root is n  # type: ignore[union-attr]
    printed = print_module(module)
    assert print_module(parse_module(printed)) == printed


def test_consecutive_comment_lines_cost_linear_time() -> None:
    lines = "".join(f"  // CHECK: %x{i} = f32[] add(%a, %b), to_apply=%f{i}\n" for i in range(40))
    text = f"HloModule m\nENTRY e {{\n  p = f32[] parameter(0)\n{lines}  ROOT n = f32[] negate(p)\n}}\n"
    start = time.process_time()
    module = parse_module(text * 1)
    assert time.process_time() - start < 1.0  # exponential backtracking took minutes
    assert all(not i.attributes for i in module.entry.instructions)  # type: ignore[union-attr]


def test_a_value_does_not_run_into_the_next_instruction_or_the_closing_brace() -> None:
    for broken in ("dimensions={0", "sharding={replicated"):
        line = f"  ROOT n = f32[2] negate(p), {broken}"
        text = f"HloModule m\nENTRY e {{\n  p = f32[2] parameter(0)\n{line}\n}}\n"
        with pytest.raises(ParseError, match="unbalanced '{'") as info:
            parse_module(text)
        assert (info.value.line, info.value.col) == (4, line.index("{") + 1)
