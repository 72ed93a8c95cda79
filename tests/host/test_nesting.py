"""Host programs at the edges: nesting beyond the bound is a located error (and within it
prints and parses back), a vertical tab keeps Python's line numbering, docstrings of
programs nested in builder functions print unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilecc.cli import main
from tilecc.errors import ParseError
from tilecc.host.parser import parse_module as parse_host
from tilecc.host.printer import print_module as print_host

HOST = Path(__file__).resolve().parents[2] / "examples" / "host" / "allreduce_mesh.py"


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("expr, line, col, message", [
    ("+".join(["1"] * 20_000), 62, 1, "an expression nests deeper than Python's parser can read"),
    ("-" * 1000 + "1", 62, 104, "the program nests more than 100 levels deep"),
    ("[" * 150 + "]" * 150, 62, 103, "the program nests more than 100 levels deep"),
])
def test_deep_host_programs_are_located_errors(expr, line, col, message, tmp_path, capsys):
    text = HOST.read_text() + "\nX = " + expr + "\n"
    assert text.count("\n") == 62
    with pytest.raises(ParseError) as info:
        parse_host(text, "p.py")
    assert (info.value.line, info.value.col) == (line, col)
    assert info.value.message.startswith(message)


def test_the_deepest_line_is_found_among_several_long_ones():
    """campaign-8 host-opt #8078: 3 MB of `1+1+...` took Python's tokenizer seconds only to
    name the line; the line is now found by counting characters, still the busiest one."""
    text = (HOST.read_text() + "\nY = " + "+".join(["1"] * 500) + "\nX = "
            + "+".join(["1"] * 200_000) + "\nZ = 1\n")
    with pytest.raises(ParseError) as info:
        parse_host(text, "p.py")
    assert info.value.line == 63 and "deeper than Python's parser" in info.value.message


@pytest.mark.parametrize("minus, deep", [(98, False), (99, True)])
def test_the_bound_holds_at_its_edge_for_one_line_statements(minus, deep):
    """`X = ---...-1` at module level: Module > Assign > minus x UnaryOp > Constant, so 99
    minus signs reach depth 101 (98: 100); the walk skips only statements too short to get there."""
    text = "import pypto.language as pl\nX = " + "-" * minus + "1\n"
    if not deep:
        parse_host(text, "p.py")
        return
    with pytest.raises(ParseError, match="the program nests more than 100 levels deep"):
        parse_host(text, "p.py")


def test_host_nesting_within_the_bound_prints_and_parses_back():
    text = HOST.read_text().replace("[1, SIZE], dtype=pl.FP32)\n", "[1, " + "-" * 80 + "SIZE], "
                                    "dtype=pl.FP32)\n", 1)
    module = parse_host(text, "p.py")
    assert parse_host(print_host(module), "again.py") == module


def test_a_vertical_tab_in_the_module_docstring_keeps_the_lines_apart(tmp_path, capsys):
    source = write(tmp_path, "p.py", '"""\x0bdoc"""\n' + HOST.read_text())
    assert main(["host-opt", source, "-o", str(tmp_path / "out.py")]) == 0
    assert (tmp_path / "out.py").read_text().startswith('"""\x0bdoc"""\n')


BUILDER = '''import pypto.language as pl


def build():
    @pl.program
    class P:
        """First line.

        More text
          indented.
        """

        @pl.function(level=pl.Level.HOST, type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            """Doc
            two."""
            return x
    return P
'''


def test_docstrings_in_builder_programs_print_unchanged(tmp_path, capsys):
    source = write(tmp_path, "p.py", BUILDER)
    assert main(["host-opt", source, "-o", str(tmp_path / "out.py")]) == 0
    assert (tmp_path / "out.py").read_text() == BUILDER
