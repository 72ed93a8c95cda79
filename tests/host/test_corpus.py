"""The corpus: pypto programs of every kind the host DSL must read (tests/host/corpus/,
re-typed programs covering pypto's surface syntax). For each: parse; print -> parse gives
an equal module; printing is stable; SynthesizeAllReduceSignals runs with the round-trip
check, leaves every function that is not a host orchestrator as it was, is idempotent and
prints Python that `ast` accepts. Where pypto defines what the pass does, the output is
compared with a golden file (corpus/golden/<name>.py, after ast normalisation)."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.pass_manager import PassPipeline
from tilecc.host.passes import get_pass
from tilecc.host.printer import print_module

from .conftest import assert_same_source

CORPUS = Path(__file__).resolve().parent / "corpus"
FILES = sorted(CORPUS.glob("c*.py"))


def comments_of(text: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]


def run_pass(module: ir.Module) -> ir.Module:
    return PassPipeline([get_pass("synthesize-allreduce-signals")]).run(module)


def test_corpus_is_complete():
    assert len(FILES) >= 20


@pytest.fixture(params=FILES, ids=[f.stem for f in FILES])
def source(request) -> tuple[str, str]:
    return request.param.stem, request.param.read_text()


def test_print_parse_round_trip_and_stable_printing(source):
    name, text = source
    module = parse_module(text, name)
    assert module.programs or any(isinstance(i, ir.Function) for i in module.items)
    printed = print_module(module)
    again = parse_module(printed, name)
    assert again == module
    assert print_module(again) == printed
    ast.parse(printed)
    # every comment survives, in source order
    assert comments_of(printed) == comments_of(text)


def test_pass_runs_is_idempotent_and_leaves_other_functions_alone(source):
    name, text = source
    module = parse_module(text, name)
    result = run_pass(module)
    ast.parse(print_module(result))
    assert comments_of(print_module(result)) == comments_of(text)
    assert len(result.programs) == len(module.programs)
    for before, after in zip(module.programs, result.programs):
        assert [f.name for f in before.functions] == [f.name for f in after.functions]
        for fb, fa in zip(before.functions, after.functions):
            if not fb.is_host_orchestrator:
                assert fa is fb
    assert [i for i in result.items if not isinstance(i, (ir.Program, ir.Verbatim))] == \
           [i for i in module.items if not isinstance(i, (ir.Program, ir.Verbatim))]
    # a second run finds every allreduce explicit and nothing to lift: same object back
    assert run_pass(result) is result
    # and parsing the printed result gives the same module
    assert parse_module(print_module(result), name) == result


GOLDEN = sorted((CORPUS / "golden").glob("c*.py"))


@pytest.mark.parametrize("golden", GOLDEN, ids=[g.stem for g in GOLDEN])
def test_pass_output_matches_golden(golden):
    module = parse_module((CORPUS / golden.name).read_text(), golden.stem)
    assert_same_source(print_module(run_pass(module)), golden.read_text())


def test_goldens_cover_the_pypto_behaviours():
    names = {g.stem for g in GOLDEN}
    assert {"c06_if_branches", "c07_nested_loops", "c08_parallel", "c09_keyword_arguments",
            "c10_tuple_element", "c11_several_returns", "c14_two_programs", "c24_join_lineage",
            "c27_window_write", "c28_level_spellings"} <= names
