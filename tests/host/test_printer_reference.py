"""The host printer writes what `ast.unparse` writes for the program's Python ast
(tests/host/ast_reference.py), byte for byte: on every fixture program (corpus, goldens,
examples, pypto forms, seeded random programs, programs with comments everywhere), before
and after SynthesizeAllReduceSignals, at every indentation the source-keeping printer asks
for, and on hand-made IR at each precedence corner that no fixture reaches."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.print_expr import print_expr
from tilecc.host.printer import print_body, print_function, print_module

from .ast_reference import (expr_node, reference_print_body, reference_print_function, reference_print_module,
                            unparse_at)
from .conftest import EXAMPLES, HEADER, synthesize
from .test_comments import sprinkle_comments
from .test_random_programs import random_program

HOST = Path(__file__).resolve().parent
FILES = sorted([*(HOST / "corpus").glob("c*.py"), *(HOST / "corpus" / "golden").glob("c*.py"),
                *(HOST / "programs").glob("*.py"), *EXAMPLES.glob("*.py")])


def fixture_sources() -> list[tuple[str, str]]:
    sources = [(path.name, path.read_text()) for path in FILES]
    sources += [(f"random {seed}", random_program(seed)[0]) for seed in range(0, 120, 7)]
    sources += [(f"{path.name} with comments", sprinkle_comments(path.read_text(), 1))
                for path in sorted((HOST / "corpus").glob("c*.py"))]
    return sources


SOURCES = fixture_sources()


def test_the_fixtures_are_all_there():
    assert len(FILES) >= 40


@pytest.mark.parametrize("name, text", SOURCES, ids=[name for name, _ in SOURCES])
def test_printer_is_ast_unparse_on_every_fixture(name, text):
    module = parse_module(text, name)
    modules = [module]
    if module.programs:
        modules.append(synthesize(text, verify=False))
    for m in modules:
        assert print_module(m) == reference_print_module(m), name
        functions = [item for item in m.items if isinstance(item, ir.Function)]
        functions += [f for p in m.programs for f in p.functions]
        for func in functions:
            for pad, unit in (("", "    "), ("    ", "    "), ("\t", "\t")):
                assert print_function(func, pad, unit) == reference_print_function(func, pad, unit), func.name
                assert print_body(func.body, pad, unit) == reference_print_body(func.body, pad, unit), func.name


V, C = ir.Var, ir.Const
A, B, X = V("a"), V("b"), V("x")


def binop(op: str, left: ir.Expr, right: ir.Expr) -> ir.BinOp:
    return ir.BinOp(op, left, right)


EXPRESSIONS = [
    binop("-", A, binop("-", B, X)), binop("-", binop("-", A, B), X),
    binop("**", binop("**", A, B), X), binop("**", A, binop("**", B, X)),
    binop("**", ir.UnaryOp("-", A), C(2)), binop("**", A, C(-1)), ir.UnaryOp("-", binop("**", A, B)),
    binop("*", binop("+", A, B), binop("<<", A, C(1))), binop("|", binop("^", A, B), binop("&", A, X)),
    binop("@", A, binop("//", B, binop("%", X, C(3)))),
    ir.UnaryOp("not", ir.BoolOp("and", (A, B))), ir.BoolOp("or", (ir.UnaryOp("not", A), B)),
    ir.BoolOp("and", (A, ir.BoolOp("or", (B, X)), ir.BoolOp("and", (A, B)), X)),
    ir.BoolOp("or", (ir.BoolOp("or", (A, B)), ir.Compare(A, ("<", "is not"), (B, X)))),
    ir.Compare(ir.Compare(A, ("==",), (B,)), ("in", "not in"), (binop("+", A, B), ir.ListExpr(()))),
    ir.IfExp(ir.IfExp(A, B, X), ir.IfExp(A, B, X), ir.IfExp(A, B, X)),
    binop("+", ir.IfExp(A, B, X), C(1)), ir.UnaryOp("~", ir.UnaryOp("-", ir.UnaryOp("+", A))),
    ir.TupleExpr(()), ir.TupleExpr((A,)), ir.TupleExpr((A, ir.TupleExpr((B,)), ir.TupleExpr(()))),
    ir.Subscript(A, ir.TupleExpr((B,))), ir.Subscript(A, ir.TupleExpr(())),
    ir.Subscript(binop("+", A, B), ir.TupleExpr((ir.Slice(None, None, None), ir.Slice(A, None, C(2))))),
    ir.Subscript(A, ir.Slice(None, B, None)), ir.Attr(C(3), "real"), ir.Attr(C(True), "real"),
    ir.Attr(C(1.5), "real"), ir.Attr(binop("+", A, B), "shape"), ir.Call(ir.Attr(A, "f"), (B,), (("k", X),)),
    ir.Call(binop("+", A, B), (), ()), C(math.inf), C(-math.inf), C(math.nan), C(-0.0), C(1e16), C(...),
    C(None), C("it's \"both\"\n"), C(""), C(-7), ir.YieldExpr(None), ir.YieldExpr(binop("+", A, B)),
    ir.ListExpr((ir.YieldExpr(A), ir.TupleExpr((A, B)))),
    ir.DictExpr((C("k"), A), (ir.TupleExpr((A, B)), ir.IfExp(A, B, X))),
    ir.OpCall("pl.range", (C(4),), (("init_values", ir.TupleExpr((A, B))),)),
    ir.OpCall("pld.tensor.alloc_window_buffer", (C(64),), (("name", C("buf")),)),
    ir.FuncCall("chip", (ir.ListComp(binop("*", A, C(2)), V("a"), ir.IfExp(A, B, X),
                                     (ir.BoolOp("or", (A, B)), ir.Compare(A, (">",), (C(0),)))),), ()),
    ir.FString((C("x = "), ir.Formatted(A, -1, None), C(" {braces}\n"),
                ir.Formatted(binop("+", A, B), ord("r"), ir.FString((C(">"), ir.Formatted(X)))),
                ir.Formatted(C("it's"), -1, None), ir.Formatted(ir.DictExpr((), ())))),
    ir.FString((ir.Formatted(ir.FString((ir.Formatted(A),))),)),
]


@pytest.mark.parametrize("context", [2, 3, 4, 8, 13, 18])
@pytest.mark.parametrize("expr", EXPRESSIONS, ids=[str(i) for i in range(len(EXPRESSIONS))])
def test_expression_corners_print_as_ast_unparse_at_every_precedence(expr, context):
    assert print_expr(expr, context) == unparse_at(expr_node(expr), context)


def function(*body: ir.Stmt, doc: str | None = None, params: tuple[ir.Param, ...] = ()) -> ir.Function:
    return ir.Function("f", params, None, body, doc=doc)


STATEMENTS = [
    function(),
    function(doc="doc\n  with ''' and \"\"\"\"", params=(ir.Param("a", ir.Symbol("pl.INT32"), C(1)),
                                                     ir.Param("b", None, None, kw_only=True),
                                                     ir.Param("c", None, ir.TupleExpr((A,)), kw_only=True))),
    function(ir.ExprStmt(C("a string first is written as a docstring")), ir.ExprStmt(C("then as a string"))),
    function(ir.Comment("# first"), ir.ExprStmt(C("a string after a comment"))),
    function(ir.If(A, (), (ir.If(B, (ir.Pass(),), (ir.If(X, (ir.Break(),), (ir.Continue(),)),)),)),
             ir.If(A, (ir.Pass(),), (ir.Comment("# keeps the else"), ir.If(B, (), ()))),
             ir.If(A, (), (ir.If(B, (), ()), ir.Pass()))),
    function(ir.For(None, (A,), ir.OpCall("pl.while_"), ()), ir.For(None, None, ir.OpCall("pl.range"), ()),
             ir.For(V("i"), (A,), ir.OpCall("pl.range"), (ir.Comment("# last"),)),
             ir.For(V("i"), (), ir.OpCall("pl.range"), ()), ir.While(ir.BoolOp("and", (A, B)), ()),
             ir.With(ir.OpCall("pl.incore"), None, ()), ir.With(A, V("s"), (ir.Pass(),))),
    function(ir.Assign(ir.TupleExpr((A,)), ir.TupleExpr((B, X))), ir.Assign(ir.TupleExpr(()), ir.TupleExpr(())),
             ir.Assign(ir.Subscript(A, ir.TupleExpr((B, X))), ir.YieldExpr(A), ir.Symbol("pl.Tensor")),
             ir.Assign(A, ir.YieldExpr(None)), ir.ExprStmt(ir.YieldExpr(ir.TupleExpr((A, B)))),
             ir.ExprStmt(ir.TupleExpr((A, B))), ir.Return((ir.TupleExpr((A,)), B)), ir.Return((ir.YieldExpr(A),)),
             ir.Return()),
]


@pytest.mark.parametrize("func", STATEMENTS, ids=[str(i) for i in range(len(STATEMENTS))])
def test_statement_corners_print_as_ast_unparse(func):
    program = ir.Program("P", (func, func), doc=None, comments=("# above",))
    module = ir.Module((ir.Verbatim("def build():\n    ...  # tilecc: a @pl.program printed from the IR goes here",
                                    (program,)), program, func))
    assert print_module(module) == reference_print_module(module)
    assert print_body(func.body, "\t", "\t") == reference_print_body(func.body, "\t", "\t")


def test_a_string_that_looks_like_a_comment_marker_stays_a_string():
    source = HEADER + "@pl.program\nclass P:\n    @pl.function\n    def f(self):\n        x = 1\n" \
                      "        '#tilecc-comment# kept'\n        return x\n"
    assert "        '#tilecc-comment# kept'\n" in print_module(parse_module(source))
