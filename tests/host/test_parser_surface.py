"""Parser / printer coverage of the wider pypto surface: parameters with defaults and
keyword-only parameters, functions without `self`, @pl.inline, pl.while_ loops, dict and
`...` literals, programs nested in builder functions or made with `pl.program(Cls)`, and
pypto's allreduce signature (`target=`, `signal=`, positional `op`). Unsupported syntax
is a one-line ParseError at the offending line:col, nested programs included."""

from __future__ import annotations

import ast
import re

import pytest

from tilecc.errors import ParseError
from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.printer import print_module

from .conftest import HEADER, host_program


def round_trip(source: str) -> ir.Module:
    module = parse_module(source, "<t>")
    printed = print_module(module)
    assert parse_module(printed, "<t>") == module
    assert print_module(parse_module(printed, "<t>")) == printed
    return module


def test_defaults_and_keyword_only_parameters():
    module = round_trip(HEADER + "@pl.program\nclass P:\n    @pl.function\n"
                        "    def f(self, a, b: pl.Scalar[pl.FP32] = -1.0, *, c, d: int = 4):\n        return a\n")
    params = module.programs[0].functions[0].params
    assert [(p.name, p.kw_only) for p in params] == [("a", False), ("b", False), ("c", True), ("d", True)]
    assert params[0].default is None and params[1].default == ir.UnaryOp("-", ir.Const(1.0))
    assert params[2].default is None and params[3].default == ir.Const(4)
    # a default that differs only in type is a different program
    other = parse_module(HEADER + "@pl.program\nclass P:\n    @pl.function\n"
                         "    def f(self, a, b: pl.Scalar[pl.FP32] = -1, *, c, d: int = 4):\n        return a\n")
    assert other != module


def test_module_level_function_and_subworker_without_self():
    module = round_trip(HEADER + "@pl.function(type=pl.FunctionType.InCore)\ndef k(x, y=2):\n"
                        "    '''doc'''\n    return x\n\n\n@pl.program\nclass P:\n"
                        "    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)\n    def cb(x):\n        ...\n")
    func = module.items[2]
    assert isinstance(func, ir.Function) and not func.has_self and func.doc == "doc"
    sub = module.programs[0].functions[0]
    assert not sub.has_self and sub.body == (ir.ExprStmt(ir.Const(...)),)


def test_inline_decorator_is_kept():
    module = round_trip(HEADER + "@pl.program\nclass P:\n    @pl.inline\n    def h(self, a):\n        return a\n")
    assert module.programs[0].functions[0].decorator_name == "inline"
    assert "@pl.inline\n" in print_module(module)


def test_while_loop_has_no_index():
    module = round_trip(HEADER + "@pl.program\nclass P:\n    @pl.function\n    def f(self, n):\n"
                        "        for (x, y) in pl.while_(init_values=(0, 1)):\n            pl.cond(x < n)\n"
                        "            xo, yo = pl.yield_(x + 1, y)\n        return xo\n")
    loop = module.programs[0].functions[0].body[0]
    assert isinstance(loop, ir.For) and loop.index is None and loop.iter_args == (ir.Var("x"), ir.Var("y"))


def test_dict_literal():
    module = round_trip(HEADER + "@pl.program\nclass P:\n    @pl.function\n    def f(self):\n"
                        "        pl.func_attr({'split': pl.SplitMode.UP_DOWN, 1: 2.5})\n")
    call = module.programs[0].functions[0].body[0].expr
    assert call.args == (ir.DictExpr((ir.Const("split"), ir.Const(1)),
                                     (ir.Symbol("pl.SplitMode.UP_DOWN"), ir.Const(2.5))),)


BUILDER = HEADER + """\
def build(n, m=3):
    '''Factory.'''
    k = n * m

    @pl.program
    class A:
        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self):
            return k

    if n > 1:
        @pl.program
        class B:
            @pl.function
            def f(self):
                return n
        return A, B
    return A
"""


def test_programs_nested_in_a_builder_function():
    module = round_trip(BUILDER)
    assert [p.name for p in module.programs] == ["A", "B"]
    builder = module.items[2]
    assert isinstance(builder, ir.Verbatim) and len(builder.programs) == 2
    printed = print_module(module)
    # the surrounding code stays as written: the docstring, the if, both returns
    assert "'''Factory.'''" in printed or '"""Factory."""' in printed
    assert "if n > 1:" in printed and "return A, B" in printed
    # rewriting a nested program replaces only that program
    renamed = module.replace_programs([module.programs[0], ir.Program("B", (), None)])
    assert renamed.items[2].programs[0] is module.programs[0]
    assert parse_module(print_module(renamed)).programs[1] == ir.Program("B", (), None)
    assert module.replace_programs(list(module.programs)) is module


def test_class_made_a_program_by_calling_pl_program():
    source = HEADER + "class C:\n    @pl.function\n    def f(self):\n        return 1\n\n\nP = pl.program(C)\n"
    module = round_trip(source)
    assert module.programs[0].name == "C" and not module.programs[0].decorated
    assert "@pl.program" not in print_module(module)
    # without the call the class is ordinary code
    assert parse_module(source.replace("P = pl.program(C)\n", "")).programs == ()


@pytest.mark.parametrize("call, args, kwargs", [
    ("pld.tensor.allreduce(target=d)", ("d",), ()),
    ("pld.tensor.allreduce(d, signal=s, op=pld.ReduceOp.Max)", ("d", "s"), ("op",)),
    ("pld.tensor.allreduce(target=d, signal=s, core_num=2)", ("d", "s"), ("core_num",)),
    ("pld.tensor.allreduce(d, s, op=pld.ReduceOp.Min, mode='mesh')", ("d", "s"), ("op", "mode")),
])
def test_allreduce_follows_pypto_signature(call, args, kwargs):
    module = round_trip(host_program(f"        x = {call}\n        return x\n"))
    value = module.programs[0].function("host_orch").body[0].value
    assert value.args == tuple(ir.Var(a) for a in args)
    assert tuple(k for k, _ in value.kwargs) == kwargs


@pytest.mark.parametrize("statement, message, col", [
    ("x = pld.tensor.allreduce(d, target=d)", "got `target` both positionally and as target=", 13),
    ("x = pld.tensor.allreduce(d, s, signal=s)", "got `signal` both positionally", 13),
    ("x = pld.tensor.allreduce(signal=s)", "got `signal` both positionally and as signal= (or an earlier", 13),
    ("x = pld.tensor.allreduce(d, None, pld.ReduceOp.Sum)", "signal=None is not allowed", 13),
    ("x = lambda: 1", "unsupported expression `Lambda`", 13),
    ("x = {1, 2}", "unsupported expression `Set`", 13),
    ("x = (yield y)", "`yield` is only supported as a statement", 14),
    ("x: pl.Tensor = (yield)", "`yield` is only supported as a statement", 25),
    ("x = {**y}", "`**mapping` unpacking", 13),
    ("for a, b in pl.range(4):\n            pass", "expected `for i in ...`", 13),
    ("for i in range(4):\n            pass", "must iterate over pl.range(), pl.parallel()", 18),
    ("for i in pl.static_range(4):\n            pass", "must iterate over pl.range(), pl.parallel()", 18),
    ("for i, (a, b) in pl.range(4, init_values=(x,)):\n            pass", "2 loop-carried values but 1", 16),
    ("for i, (a,) in pl.range(4):\n            pass", "loop-carried values need init_values", 16),
    ("for x in pl.while_(init_values=(x,)):\n            pass", "expected `for (a, b) in pl.while_(", 13),
    ("for (a, b) in pl.while_(init_values=[x]):\n            pass", "2 loop-carried values but 1", 13),
    ("try:\n            pass\n        except E:\n            pass", "unsupported statement `Try`", 9),
    ("assert x", "unsupported statement `Assert`", 9),
    ("with a, b:\n            pass", "one context manager per `with`", 9),
])
def test_unsupported_syntax_is_one_line_with_position(statement, message, col):
    with pytest.raises(ParseError, match=re.escape(message)) as info:
        parse_module(host_program(f"        {statement}\n        return 0\n"), "prog.py")
    err = info.value
    assert (err.line, err.col) == (11, col)
    assert "\n" not in str(err).rstrip("\n") and str(err).startswith(f"prog.py:11:{col}: error: ")


@pytest.mark.parametrize("header, message, line, col", [
    ("def f(self, /, a):", "positional-only", 7, 11),
    ("def f(self, **kw):", "`**kwargs`", 7, 19),
    ("def f(self=1):", "`self` cannot have a default", 7, 11),
])
def test_unsupported_parameters(header, message, line, col):
    source = HEADER + f"@pl.program\nclass P:\n    @pl.function\n    {header}\n        pass\n"
    with pytest.raises(ParseError, match=re.escape(message)) as info:
        parse_module(source, "p.py")
    assert (info.value.line, info.value.col) == (line, col)


def test_error_inside_a_nested_program_points_at_the_file_line():
    source = BUILDER.replace("            return k\n", "            return [i for i in k]\n")
    with pytest.raises(ParseError, match="unsupported expression `ListComp`") as info:
        parse_module(source, "b.py")
    assert (info.value.line, info.value.col) == (12, 20)
    assert info.value.source_line.strip() == "return [i for i in k]"


def test_builder_indented_with_tabs():
    source = HEADER + "def build():\n\tx = 1\n\t@pl.program\n\tclass A:\n\t\t@pl.function\n\t\tdef f(self):\n" \
                      "\t\t\treturn x\n\treturn A\n"
    module = round_trip(source)
    assert module.programs[0].functions[0].body == (ir.Return((ir.Var("x"),)),)
    assert "\n\t@pl.program\n\tclass A:\n" in print_module(module)


def test_yield_statements_and_f_strings():
    module = round_trip(HEADER + "@pl.program\nclass P:\n    @pl.function\n    def f(self, x, y):\n"
                        "        yield\n        yield x\n        yield x, y\n"
                        "        pl.static_print(f'{x!r:>{y}} and {y}')\n")
    body = module.programs[0].functions[0].body
    assert [s.expr for s in body[:3]] == [ir.YieldExpr(None), ir.YieldExpr(ir.Var("x")),
                                          ir.YieldExpr(ir.TupleExpr((ir.Var("x"), ir.Var("y"))))]
    fstring = body[3].expr.args[0]
    assert isinstance(fstring, ir.FString) and fstring.parts[0] == ir.Formatted(
        ir.Var("x"), ord("r"), ir.FString((ir.Const(">"), ir.Formatted(ir.Var("y")))))


def test_window_write_target():
    module = round_trip(host_program("        C[i, 0:4] = x\n        return C\n"))
    stmt = module.programs[0].function("host_orch").body[0]
    index = ir.TupleExpr((ir.Var("i"), ir.Slice(ir.Const(0), ir.Const(4), None)))
    assert stmt.target == ir.Subscript(ir.Var("C"), index)
    assert ir.target_vars(stmt.target) == (ir.Var("C"),)


def test_kept_source_of_a_builder_stays_valid_python():
    source = HEADER + "def build(n):\n    if n:\n        @pl.program\n        class A:\n            pass\n\n" \
                      "        return A\n    else:\n        @pl.program\n        class B:\n            pass\n"
    module = round_trip(source)
    builder = module.items[2]
    assert [p.name for p in builder.programs] == ["A", "B"]
    ast.parse(builder.source)


@pytest.mark.parametrize("line, message", [
    ("from pypto.language.distributed import tensor as t",
     "prog.py:1:1: error: `tensor` imported from pypto.language.distributed: tilecc reads ops by their full names; "
     "use `import pypto.language.distributed as pld` and write `pld.tensor`"),
    ("import pypto.language.distributed.system",
     "prog.py:1:1: error: `system` imported from pypto.language.distributed: tilecc reads ops by their full names; "
     "use `import pypto.language.distributed as pld` and write `pld.system`"),
    ("from pypto.language import range as prange",
     "prog.py:1:1: error: `range` imported from pypto.language: tilecc reads ops by their full names; "
     "use `import pypto.language as pl` and write `pl.range`"),
])
def test_ops_imported_under_other_names_are_refused(line, message):
    # `t.allreduce(d)` would be a call tilecc does not know, left without a signal
    with pytest.raises(ParseError) as info:
        parse_module(line + "\n" + HEADER, "prog.py")
    assert str(info.value).startswith(message)


def test_classes_and_enums_may_be_imported_by_name():
    source = ("from pypto.language import FunctionType, Level, Role\n"
              "from pypto.language.distributed import ReduceOp\nfrom pypto import language as pl\n")
    assert len(parse_module(source).items) == 3
