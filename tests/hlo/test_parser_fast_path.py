"""The parser's fast path (one line as XLA / jax print it) and its general path read every
module the same: the same printed module, or the same error at the same place, on every
fixture and, when it is beside the checkout, on XLA's own test corpus. The general path
alone is the fast path turned off (it hands every line over)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilecc.errors import ParseError
from tilecc.hlo import parser
from tilecc.hlo.printer import print_module

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.hlo"))
CORPUS = ROOT.parent / "shared" / "xla-hlo-tests" / "modules"


def _read(text: str, path: str) -> str:
    try:
        return print_module(parser.parse_module(text, path))
    except ParseError as err:
        return f"error: {err}"


def _general_only(monkeypatch) -> None:
    monkeypatch.setattr(parser._Parser, "parse_instruction", lambda self, scope, refs: None)


def _both_paths(texts: list[tuple[str, str]], monkeypatch) -> list[tuple[str, str, str]]:
    fast = [_read(text, path) for path, text in texts]
    with monkeypatch.context() as patch:
        _general_only(patch)
        general = [_read(text, path) for path, text in texts]
    return [(path, f, g) for (path, _), f, g in zip(texts, fast, general) if f != g]


def test_the_fast_path_reads_real_lines(monkeypatch) -> None:
    """It is taken at all: most lines of a fixture are read by the fast path."""
    taken = []
    original = parser._Parser.parse_instruction

    def spy(self, scope, refs):
        result = original(self, scope, refs)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(parser._Parser, "parse_instruction", spy)
    path = FIXTURES[0]
    parser.parse_module(path.read_text(), str(path))
    assert sum(taken) > len(taken) // 2


def test_fast_and_general_paths_agree_on_every_fixture(monkeypatch) -> None:
    assert FIXTURES
    texts = [(str(p.relative_to(ROOT)), p.read_text()) for p in FIXTURES]
    assert _both_paths(texts, monkeypatch) == []


def test_fast_and_general_paths_agree_on_malformed_lines(monkeypatch) -> None:
    """Lines the fast path must hand over or refuse exactly as the general path does."""
    body = ["x = f32[] add(p, p), dimensions={0}, dimensions={0}",
            "x = f32[] add(p)", "x = f32[] add(p, q)", "x = f32[2]{0} bogus(p)",
            "x = f33[] add(p, p)", "x = f32[] add(p, p), channel_id=x",
            "x = f32[] add(p, p) // comment", "x = f32[] reduce(p, p), to_apply=c",
            "x = f32[] constant(1.5e)", "ROOT = f32[] add(p, p)",
            "x = f32[] add(p,p)", "x = f32[] add(%p, p)", "x = f32[] negate(p), k={a,{b}}",
            "x = f32[] add(p, p), backend_config=\"a, b\"",
            "x = s32[2]{0} constant({1, 2})", "x = f32[] parameter(1)",
            "x = f32[]  add(p, p)", "x = f32[] add(p, p)}",
            # metadata, whose end the fast path finds with str.find
            'x = f32[] add(p, p), metadata={op_name="a}b" source_line=1}',
            'x = f32[] add(p, p), metadata={op_name="a{b}"}',
            'x = f32[] add(p, p), metadata={op_name="a\\"}"}',
            'x = f32[] add(p, p), metadata={op_name="a}', 'x = f32[] add(p, p), metadata={}',
            'x = f32[] add(p, p), metadata={op_name="a"}x', 'x = f32[] add(p, p), metadata={a}}',
            'x = f32[] add(p, p), metadata={a}, metadata={b}',
            'x = f32[] add(p, p), metadata={op_name="a"}, backend_config="b"']
    texts = [(f"<case {k}>", f"HloModule m\n\nENTRY e {{\n  p = f32[] parameter(0)\n  {line}\n}}\n")
             for k, line in enumerate(body)]
    assert _both_paths(texts, monkeypatch) == []


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"XLA's test corpus is not beside this "
                    f"checkout ({CORPUS}); it is data for conformance runs")
def test_fast_and_general_paths_agree_on_the_xla_corpus(monkeypatch) -> None:
    texts = [(p.name, p.read_text(errors="replace")) for p in sorted(CORPUS.rglob("*"))
             if p.is_file()]
    assert len(texts) > 1000
    assert _both_paths(texts, monkeypatch) == []
