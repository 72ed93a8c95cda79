"""Whitespace and comments between HLO tokens: any amount parses to the same module.

The whitespace pattern once backtracked exponentially (40 blank lines ran for minutes), so
each case runs in a child interpreter that is stopped after a generous bound: a relapse
fails here instead of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tilecc.errors import ParseError
from tilecc.hlo.lexer import Cursor
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module

BODY = "\nENTRY e {\n  p = s32[] parameter(0)\n%s  ROOT r = s32[] add(p, p)\n}\n"
HEAD = "HloModule m"

CASES = {
    "blank lines": (HEAD, "\n" * 5000),
    "trailing spaces after the header": (HEAD + " " * 5000, ""),
    "line comments": (HEAD, "  // a comment\n" * 2000),
    "slashes only": (HEAD, "/" * 5000 + "\n"),
    "block comments": (HEAD, "  /* c */ /**/ /***/\t\n" * 2000),
    "mixed": (HEAD, " \n\t// x //\n/* a\n*/ \r\n" * 1000),
}

CHILD = """
import sys
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
text = sys.stdin.read()
sys.stdout.write(print_module(parse_module(text, "ws.hlo")))
"""


@pytest.mark.parametrize("name", sorted(CASES))
def test_any_whitespace_parses_to_the_plain_module(name: str) -> None:
    head, filler = CASES[name]
    plain = print_module(parse_module(HEAD + BODY % "", "plain.hlo"))
    done = subprocess.run([sys.executable, "-c", CHILD], input=head + BODY % filler,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain


@pytest.mark.parametrize("text, end", [
    ("  x", 2), ("// a\n// b\nx", 10), ("/* a */x", 7), ("/**/x", 4), ("/***/x", 5),
    ("/* a * / b */x", 13), ("/*/ */x", 6),
    # an unclosed block comment is not whitespace: the parser reports it where it starts
    ("  /* open", 2), ("/*/", 0),
])
def test_skip_stops_at_the_first_token(text: str, end: int) -> None:
    cursor = Cursor(text, "t.hlo")
    cursor.skip()
    assert cursor.pos == end


def test_a_layout_never_spans_lines() -> None:
    # an unclosed layout once swallowed the next line into the message
    text = "HloModule m\nENTRY e {\n  ROOT p = f32[4,8]{1,a.17, b)\n}\n"
    with pytest.raises(ParseError) as info:
        parse_module(text, "l.hlo")
    assert (info.value.line, info.value.col) == (3, 20)   # at the layout
    assert "\n" not in info.value.message
