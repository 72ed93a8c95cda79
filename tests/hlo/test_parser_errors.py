"""Malformed HLO text: each case gives a ParseError with the expected message and line:col."""

from __future__ import annotations

import pytest

from tilecc.errors import ParseError
from tilecc.hlo.parser import parse_module

GOOD = """HloModule m, replica_count=4

add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}

ENTRY main {
  p = s32[4]{0} parameter(0)
  c = s32[] constant(0)
  ROOT r = s32[] reduce(p, c), dimensions={0}, to_apply=add
}
"""

ENTRY_TAIL = "\n\nENTRY main {\n  p = s32[4]{0} parameter(0)\n"

COND = """HloModule c

br0 {
  a = s32[] parameter(0)
  ROOT r = s32[] negate(a)
}

ENTRY main {
  pr = pred[] parameter(0)
  i = s32[] parameter(1)
  ROOT c = s32[] conditional(pr, i, i), true_computation=br0, false_computation=br0
}
"""

SELECT_AND_SCATTER = """HloModule s

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}

ENTRY main {
  x = f32[4] parameter(0)
  s = f32[2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=ge, scatter=ge
}
"""

# (id, text, line, col, message fragment)
CASES = [
    ("empty input", "", 1, 1, "expected 'HloModule name'"),
    ("no header", "ENTRY e {\n  ROOT p = s32[] parameter(0)\n}\n", 1, 1, "expected 'HloModule name'"),
    ("unknown opcode", GOOD.replace("add(x, y)", "plus(x, y)"), 6, 18, "unknown opcode 'plus'"),
    ("undefined operand", GOOD.replace("add(x, y)", "add(x, z)"), 6, 25, "undefined instruction 'z'"),
    ("duplicate name", GOOD.replace("y = s32[] parameter(1)", "x = s32[] parameter(1)")
     .replace("add(x, y)", "add(x, x)"), 5, 3, "'x' is defined twice"),
    ("unknown element type", GOOD.replace("p = s32[4]{0}", "p = q32[4]{0}"), 10, 7,
     "unknown element type 'q32'"),
    ("bad dimension", GOOD.replace("p = s32[4]{0}", "p = s32[4x]{0}"), 10, 11, "bad dimension '4x'"),
    ("bad layout", GOOD.replace("p = s32[4]{0}", "p = s32[4]{1}"), 10, 13,
     "is not a permutation of the 1 dimensions"),
    ("missing shape", GOOD.replace("c = s32[] constant(0)", "c = constant(0)"), 11, 7,
     "expected a shape"),
    ("two ROOTs", GOOD.replace("  x = s32[] parameter(0)", "  ROOT x = s32[] parameter(0)"),
     6, 8, "a second ROOT"),
    ("unclosed computation", GOOD[:GOOD.rindex("}")], 9, 12, "is not closed"),
    ("unbalanced brace in attribute", GOOD.replace("dimensions={0}", "dimensions={0"), 12, 43,
     "unbalanced '{'"),
    ("unbalanced bracket", GOOD.replace("dimensions={0}", "dimensions={0]"), 12, 45,
     "unbalanced ']'"),
    ("wrong operand count", GOOD.replace("add(x, y)", "add(x)"), 6, 18, "add takes 2 operands, got 1"),
    ("unary with two operands", GOOD.replace("add(x, y)", "negate(x, y)"), 6, 18,
     "negate takes 1 operand, got 2"),
    ("unknown computation", GOOD.replace("to_apply=add", "to_apply=sum"), 12, 57,
     "unknown computation 'sum'"),
    ("missing to_apply", GOOD.replace(", to_apply=add", ""), 12, 18,
     "lacks the required attribute 'to_apply'"),
    ("missing dimensions", GOOD.replace("dimensions={0}, ", ""), 12, 18,
     "lacks the required attribute 'dimensions'"),
    ("bad dimensions list", GOOD.replace("dimensions={0}", "dimensions={a}"), 12, 43,
     "must be a list of integers"),
    ("duplicate attribute", GOOD.replace("to_apply=add", "to_apply=add, to_apply=add"), 12, 62,
     "'to_apply' is given twice"),
    ("bad constant", GOOD.replace("constant(0)", "constant(zero)"), 11, 22,
     "expected an integer for s32"),
    ("constant out of range", GOOD.replace("constant(0)", "constant(2147483648)"), 11, 22,
     "out of range for s32"),
    ("constant with too few elements",
     GOOD.replace("c = s32[] constant(0)", "c = s32[3] constant({1, 2})"), 11, 23,
     "dimension 0 has 2 elements, the shape says 3"),
    ("empty constant", GOOD.replace("constant(0)", "constant()"), 11, 22, "constant needs a value"),
    ("bad parameter number", GOOD.replace("parameter(1)", "parameter(x)"), 5, 23,
     "expected a parameter number"),
    ("duplicate parameter number", GOOD.replace("parameter(1)", "parameter(0)"), 5, 3,
     "parameter number 0 is used twice"),
    ("parameter gap", GOOD.replace("parameter(1)", "parameter(2)"), 3, 5, "lacks parameter(1)"),
    ("reserved instruction name", GOOD.replace("c = s32[] constant(0)", "s32 = s32[] constant(0)")
     .replace("reduce(p, c)", "reduce(p, s32)"), 11, 3, "'s32' is a reserved word"),
    ("two ENTRY computations", GOOD.replace("add {", "ENTRY add {"), 9, 7, "a second ENTRY"),
    ("duplicate computation", GOOD + "\nadd {\n  ROOT z = s32[] parameter(0)\n}\n", 15, 1,
     "computation 'add' is defined twice"),
    ("empty computation", GOOD.replace("ENTRY main {", "empty {\n}\n\nENTRY main {"), 9, 7,
     "has no instructions"),
    ("bad replica groups", GOOD.replace("ROOT r = s32[] reduce(p, c), dimensions={0}, to_apply=add",
                                        "ROOT r = s32[4]{0} all-reduce(p), replica_groups={{0,1},x}, "
                                        "to_apply=add"), 12, 52, "replica_groups must look like"),
    ("bad boolean", GOOD.replace("ROOT r = s32[] reduce(p, c), dimensions={0}, to_apply=add",
                                 "ROOT r = s32[4]{0} all-reduce(p), constrain_layout=yes, "
                                 "to_apply=add"), 12, 54, "constrain_layout must be true or false"),
    ("unterminated string", GOOD.replace("constant(0)", 'constant(0), metadata={op_name="abc}'),
     11, 44, "unterminated string"),
    ("garbage after instruction", GOOD.replace("constant(0)", "constant(0) junk"), 11, 25,
     "unexpected 'junk' after instruction 'c'"),
    ("missing equals", GOOD.replace("c = s32[] constant(0)", "c s32[] constant(0)"), 11, 3,
     "expected an instruction"),
    ("unknown comparison direction", GOOD.replace(
        "ROOT r = s32[] reduce(p, c), dimensions={0}, to_apply=add",
        "ROOT r = pred[4]{0} compare(p, p), direction=LESS"), 12, 48,
     "unknown comparison direction 'LESS'"),
    ("bad slice", GOOD.replace("ROOT r = s32[] reduce(p, c), dimensions={0}, to_apply=add",
                               "ROOT r = s32[2]{0} slice(p), slice={0:2}"), 12, 38,
     "slice must look like"),
    ("undefined control predecessor", GOOD.replace("constant(0)", "constant(0), control-predecessors={q}"),
     11, 48, "control predecessor 'q'"),
    ("entry called", GOOD.replace("to_apply=add", "to_apply=main"), 12, 57,
     "the entry computation 'main' cannot be called"),
    ("bad header attribute", GOOD.replace("replica_count=4", "replica_count=four"), 1, 14,
     "replica_count must be a positive integer"),
    ("unbalanced tuple shape", GOOD.replace("ROOT r = s32[] reduce", "ROOT r = (s32[] reduce"),
     12, 19, "expected ',' between tuple element shapes, found 'reduce'"),
    ("conditional without false_computation", COND.replace(", false_computation=br0", ""),
     11, 58, "conditional has true_computation but no false_computation"),
    ("conditional without true_computation", COND.replace("true_computation=br0, ", ""),
     11, 59, "conditional has false_computation but no true_computation"),
    ("empty true_computation", COND.replace("true_computation=br0", "true_computation={}"),
     11, 58, "true_computation names exactly one computation"),
    ("two false computations", COND.replace("false_computation=br0", "false_computation={br0, br0}"),
     11, 81, "false_computation names exactly one computation"),
    ("select-and-scatter without scatter", SELECT_AND_SCATTER.replace(", scatter=ge", ""),
     13, 81, "select-and-scatter has select but no scatter"),
]


@pytest.mark.parametrize("name,text,line,col,fragment", CASES, ids=[c[0] for c in CASES])
def test_malformed_input(name: str, text: str, line: int, col: int, fragment: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_module(text, "bad.hlo")
    err = info.value
    assert fragment in err.message, err.message
    assert (err.line, err.col) == (line, col), f"{err.line}:{err.col}: {err.message}"
    assert err.path == "bad.hlo"
    assert str(err).startswith(f"bad.hlo:{line}:{col}: error: ")
    lines = text.split("\n")
    assert err.source_line == (lines[line - 1] if line <= len(lines) else "")


def test_a_computation_without_root_returns_its_last_instruction() -> None:
    module = parse_module(GOOD.replace("ROOT s = ", "s = "), "ok.hlo")  # XLA's rule
    add = module.computations[0]
    assert add.root is not None and add.root.name == "s"


def test_there_are_at_least_30_cases() -> None:
    assert len(CASES) >= 30


def test_a_value_spanning_lines_is_quoted_on_one_line() -> None:
    """campaign-8 run-hlo #5822: replica groups broken over two lines were quoted with the
    line break, so the error ran over two lines; every ParseError message is one line."""
    text = GOOD.replace("ROOT r = s32[] reduce(p, c), dimensions={0}, to_apply=add",
                        "ROOT r = s32[4] all-reduce(p), replica_groups={{0,1\n2,3}}, to_apply=add")
    with pytest.raises(ParseError) as info:
        parse_module(text)
    assert "\n" not in str(info.value) and "got '{{0,1\\n2,3}}'" in str(info.value)


def test_good_text_parses() -> None:
    module = parse_module(GOOD)
    assert module.replica_count == 4
    assert module.entry.root.name == "r"


def test_render_points_at_the_column() -> None:
    with pytest.raises(ParseError) as info:
        parse_module(GOOD.replace("add(x, y)", "plus(x, y)"), "bad.hlo")
    assert info.value.render().splitlines()[1:] == ["  ROOT s = s32[] plus(x, y)",
                                                     " " * 17 + "^"]
