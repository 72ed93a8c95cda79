"""Host IR expressions -> Python source text, exactly as `ast.unparse` writes them.

Contract: `print_expr(expr, precedence)` is the text `ast.unparse` gives for the Python ast
of `expr` in a context of that precedence (the `PREC_*` levels below, those of CPython's
`ast._Precedence`): the same parentheses, spacing, literal spelling (`repr`, `1e309` for
inf) and quirks (`yield (a + b)`, `x, = ...`, `1 .real`), so printed programs are Python's
own normal form while no ast is built. F-strings, whose quoting rules are long and differ
between Python versions, are the one form handed to `ast.unparse` itself (rebuilt from
the printed text of their fields). Op calls print under their full names; the internal
`name` kwarg of `pld.tensor.alloc_window_buffer` is never printed (spec 002, "Checks").
tests/host/test_printer_reference.py holds this equal to `ast.unparse` on every fixture.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from typing import Any

from tilecc.host import ir
from tilecc.host.op_forms import ALLOC_WINDOW_BUFFER

# CPython's ast._Precedence, by value (`next()` there is `+ 1`, capped at ATOM)
PREC_TUPLE, PREC_YIELD, PREC_TEST, PREC_OR, PREC_AND, PREC_NOT, PREC_CMP = 2, 3, 4, 5, 6, 7, 8
PREC_EXPR, PREC_BXOR, PREC_BAND, PREC_SHIFT, PREC_ARITH, PREC_TERM = 9, 10, 11, 12, 13, 14
PREC_FACTOR, PREC_POWER, PREC_ATOM = 15, 16, 18

BINOP_PRECEDENCE = {"+": PREC_ARITH, "-": PREC_ARITH, "*": PREC_TERM, "@": PREC_TERM, "/": PREC_TERM,
                    "%": PREC_TERM, "//": PREC_TERM, "<<": PREC_SHIFT, ">>": PREC_SHIFT, "|": PREC_EXPR,
                    "^": PREC_BXOR, "&": PREC_BAND, "**": PREC_POWER}
BOOLOP_PRECEDENCE = {"and": PREC_AND, "or": PREC_OR}
# an overflowing literal stands for inf, as ast.unparse writes it
_INF = "1e" + repr(sys.float_info.max_10_exp + 1)


def print_expr(expr: ir.Expr, precedence: int = PREC_TEST) -> str:
    try:
        printer = _PRINTERS[type(expr)]
    except KeyError:
        raise TypeError(f"not a host IR expression: {expr!r}") from None
    return printer(expr, precedence)


def _parens(text: str, own: int, context: int) -> str:
    return f"({text})" if context > own else text


def constant_text(value: Any) -> str:
    if value is ...:
        return "..."
    if isinstance(value, float):
        return repr(value).replace("inf", _INF).replace("nan", f"({_INF}-{_INF})")
    return repr(value)


def _items(items: tuple[ir.Expr, ...]) -> str:
    """ast.unparse's items_view: comma-separated, a trailing comma after a single item."""
    if len(items) == 1:
        return print_expr(items[0]) + ","
    return ", ".join([print_expr(e) for e in items])


def _arguments(args: tuple[ir.Expr, ...], kwargs: tuple[tuple[str, ir.Expr], ...]) -> str:
    parts = [print_expr(a) for a in args]
    if kwargs:
        parts += [f"{key}={print_expr(value)}" for key, value in kwargs]
    return ", ".join(parts)


def _attr(e: ir.Attr, _: int) -> str:
    # `3.real` does not lex: ast.unparse writes `3 .real`
    space = " " if isinstance(e.value, ir.Const) and isinstance(e.value.value, int) else ""
    return f"{print_expr(e.value, PREC_ATOM)}{space}.{e.attr}"


def _op_call(e: ir.OpCall, _: int) -> str:
    kwargs = e.kwargs
    if e.op == ALLOC_WINDOW_BUFFER and kwargs:
        kwargs = tuple((k, v) for k, v in kwargs if k != "name")
    return f"{e.op}({_arguments(e.args, kwargs)})"


def _binop(e: ir.BinOp, context: int) -> str:
    own = BINOP_PRECEDENCE[e.op]
    left, right = (own + 1, own) if e.op == "**" else (own, own + 1)
    return _parens(f"{print_expr(e.left, left)} {e.op} {print_expr(e.right, right)}", own, context)


def _unary(e: ir.UnaryOp, context: int) -> str:
    if e.op == "not":
        return _parens("not " + print_expr(e.operand, PREC_NOT), PREC_NOT, context)
    return _parens(e.op + print_expr(e.operand, PREC_FACTOR), PREC_FACTOR, context)


def _compare(e: ir.Compare, context: int) -> str:
    parts = [print_expr(e.left, PREC_EXPR)]
    for op, comparator in zip(e.ops, e.comparators):
        parts.append(f" {op} {print_expr(comparator, PREC_EXPR)}")
    return _parens("".join(parts), PREC_CMP, context)


def _boolop(e: ir.BoolOp, context: int) -> str:
    own = BOOLOP_PRECEDENCE[e.op]
    # ast.unparse raises the level by one more for every further operand
    text = f" {e.op} ".join([print_expr(v, min(own + 1 + i, PREC_ATOM)) for i, v in enumerate(e.values)])
    return _parens(text, own, context)


def _ifexp(e: ir.IfExp, context: int) -> str:
    text = f"{print_expr(e.then, PREC_OR)} if {print_expr(e.cond, PREC_OR)} else {print_expr(e.orelse)}"
    return _parens(text, PREC_TEST, context)


def _tuple(e: ir.TupleExpr, context: int) -> str:
    if not e.items:
        return "()"
    return _parens(_items(e.items), PREC_TUPLE, context)


def _subscript(e: ir.Subscript, _: int) -> str:
    index = e.index
    inner = _items(index.items) if isinstance(index, ir.TupleExpr) and index.items else print_expr(index)
    return f"{print_expr(e.value, PREC_ATOM)}[{inner}]"


def _slice(e: ir.Slice, _: int) -> str:
    text = (print_expr(e.lower) if e.lower is not None else "") + ":"
    text += print_expr(e.upper) if e.upper is not None else ""
    return text + (":" + print_expr(e.step) if e.step is not None else "")


def _listcomp(e: ir.ListComp, _: int) -> str:
    text = f"[{print_expr(e.elt)} for {print_expr(e.target, PREC_TUPLE)} in {print_expr(e.iterable, PREC_OR)}"
    return text + "".join(f" if {print_expr(c, PREC_OR)}" for c in e.conditions) + "]"


def _yield(e: ir.YieldExpr, context: int) -> str:
    text = "yield" if e.value is None else "yield " + print_expr(e.value, PREC_ATOM)
    return _parens(text, PREC_YIELD, context)


def _fstring(e: ir.FString, _: int) -> str:
    return ast.unparse(_fstring_node(e))


def _fstring_node(e: ir.FString) -> ast.JoinedStr:
    """The f-string as an ast: its constant parts as they are, each field's expression
    parsed back from its printed text (the same ast, as printing is Python's normal form)."""
    values: list[ast.expr] = []
    for part in e.parts:
        if isinstance(part, ir.Const) and isinstance(part.value, str):
            values.append(ast.Constant(part.value))
        elif isinstance(part, ir.Formatted):
            value = ast.parse(print_expr(part.value), mode="eval").body
            if part.spec is not None and not isinstance(part.spec, ir.FString):
                raise TypeError(f"not an f-string format spec: {part.spec!r}")
            spec = _fstring_node(part.spec) if part.spec is not None else None
            values.append(ast.FormattedValue(value, part.conversion, spec))
        else:
            raise TypeError(f"not an f-string part: {part!r}")
    return ast.JoinedStr(values)


_PRINTERS: dict[type, Callable[[Any, int], str]] = {
    ir.Var: lambda e, _: e.name,
    ir.Const: lambda e, _: constant_text(e.value),
    ir.Symbol: lambda e, _: e.path,
    ir.Attr: _attr,
    ir.OpCall: _op_call,
    ir.FuncCall: lambda e, _: f"self.{e.func}({_arguments(e.args, e.kwargs)})",
    ir.Call: lambda e, _: f"{print_expr(e.func, PREC_ATOM)}({_arguments(e.args, e.kwargs)})",
    ir.BinOp: _binop,
    ir.UnaryOp: _unary,
    ir.Compare: _compare,
    ir.BoolOp: _boolop,
    ir.IfExp: _ifexp,
    ir.TupleExpr: _tuple,
    ir.ListExpr: lambda e, _: "[" + ", ".join([print_expr(x) for x in e.items]) + "]",
    ir.DictExpr: lambda e, _: "{" + ", ".join([f"{print_expr(k)}: {print_expr(v)}"
                                               for k, v in zip(e.keys, e.values)]) + "}",
    ir.Subscript: _subscript,
    ir.Slice: _slice,
    ir.ListComp: _listcomp,
    ir.YieldExpr: _yield,
    ir.FString: _fstring,
}
