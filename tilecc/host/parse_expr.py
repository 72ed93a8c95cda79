"""Expressions of the host DSL: Python ast expressions -> host IR expressions.

Contract: `ExprParser` is the expression half of the host parser (tilecc/host/parser.py
holds the statement and module half and subclasses it). It needs `error(node, message)`
returning a ParseError at the node's line:col, `assign_value` (the right-hand side being
parsed: the only place pld.tensor.alloc_window_buffer may appear) and `statement_value`
(the expression statement being parsed: the only place for `yield`). Calls of `pl.` /
`pld.` ops become OpCall with pypto's call forms normalised (tilecc/host/op_forms.py);
`self.f(...)` becomes FuncCall; other calls stay Call. Anything else is a ParseError
naming what was expected.
"""

from __future__ import annotations

import ast
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, NoReturn

from tilecc.errors import ParseError
from tilecc.host import ir
from tilecc.host.op_forms import ALLOC_WINDOW_BUFFER, resolve
from tilecc.host.source_lines import dotted

BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&",
          ast.BitOr: "|", ast.BitXor: "^", ast.MatMult: "@"}
UNARYOPS = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}
CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
          ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
BOOLOPS = {ast.And: "and", ast.Or: "or"}


class ExprParser(ABC):
    assign_value: ast.expr | None
    statement_value: ast.expr | None

    @abstractmethod
    def error(self, node: ast.AST | None, message: str) -> ParseError: ...

    def keywords(self, keywords: list[ast.keyword]) -> tuple[tuple[str, ir.Expr], ...]:
        out = []
        for kw in keywords:
            if kw.arg is None:
                raise self.error(kw, "`**kwargs` is not supported")
            out.append((kw.arg, self.argument(kw.value)))
        return tuple(out)

    def expr(self, node: ast.expr) -> ir.Expr:
        handler = _EXPR_FORMS.get(type(node))
        if handler is None:
            raise self.error(node, f"unsupported expression `{type(node).__name__}` "
                                   "(expected names, constants, calls, operators, tuples, lists, dicts, "
                                   "f-strings or subscripts)")
        return handler(self, node)

    def constant(self, node: ast.Constant) -> ir.Expr:
        if isinstance(node.value, (bool, int, float, str)) or node.value is None or node.value is ...:
            return ir.Const(node.value)
        raise self.error(node, f"unsupported constant {node.value!r}")

    def attribute(self, node: ast.Attribute) -> ir.Expr:
        name = dotted(node)
        if name is not None and name.split(".", 1)[0] in ("pl", "pld"):
            return ir.Symbol(name)
        return ir.Attr(self.expr(node.value), node.attr)

    def dict_expr(self, node: ast.Dict) -> ir.Expr:
        keys = [k for k in node.keys if k is not None]   # None: a `**mapping` entry
        if len(keys) != len(node.keys):
            raise self.error(node, "`**mapping` unpacking in a dict is not supported")
        return ir.DictExpr(tuple(self.expr(k) for k in keys), tuple(self.expr(v) for v in node.values))

    def yield_expr(self, node: ast.Yield) -> ir.Expr:
        if node is not self.statement_value:
            raise self.error(node, "`yield` is only supported as a statement")
        return ir.YieldExpr(self.expr(node.value) if node.value is not None else None)

    def starred(self, node: ast.Starred) -> ir.Expr:
        raise self.error(node, "`*args` unpacking is not supported")

    def fstring_part(self, node: ast.expr) -> ir.Expr:
        if isinstance(node, ast.FormattedValue):
            spec = self.expr(node.format_spec) if node.format_spec is not None else None
            return ir.Formatted(self.expr(node.value), node.conversion, spec)
        return self.expr(node)

    def argument(self, node: ast.expr) -> ir.Expr:
        """A call argument: any expression, or a list comprehension (only here, as in pypto)."""
        if not isinstance(node, ast.ListComp):
            return self.expr(node)
        if len(node.generators) != 1:
            raise self.error(node, "a list comprehension argument supports a single `for` clause")
        gen = node.generators[0]
        if gen.is_async:
            raise self.error(node, "a list comprehension argument cannot use `async for`")
        if not isinstance(gen.target, ast.Name):
            raise self.error(gen.target, "a list comprehension's target must be a single name "
                                         "(`for i in ...`, not `for i, j in ...`)")
        return ir.ListComp(self.expr(node.elt), ir.Var(gen.target.id), self.expr(gen.iter),
                           tuple(self.expr(c) for c in gen.ifs))

    def call(self, node: ast.Call) -> ir.Expr:
        args = tuple(self.argument(a) for a in node.args)
        kwargs = self.keywords(node.keywords)
        func = node.func
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id == "self"):
            return ir.FuncCall(func.attr, args, kwargs, node.lineno, node.col_offset + 1)
        name = dotted(func)
        if name is None or name.split(".", 1)[0] not in ("pl", "pld"):
            return ir.Call(self.expr(func), args, kwargs)

        def fail(message: str) -> NoReturn:
            raise self.error(node, message)

        op, args, kwargs = resolve(name, args, kwargs, fail)
        if op == ALLOC_WINDOW_BUFFER:
            if any(k == "name" for k, _ in kwargs):
                raise self.error(node, "pld.tensor.alloc_window_buffer takes its name from the "
                                       "assignment's left-hand side; do not pass name=")
            if node is not self.assign_value:
                raise self.error(node, "pld.tensor.alloc_window_buffer must be assigned to one variable")
        return ir.OpCall(op, args, kwargs, node.lineno, node.col_offset + 1)


def _optional(parser: ExprParser, node: ast.expr | None) -> ir.Expr | None:
    return parser.expr(node) if node is not None else None


# ast expression type -> its IR (one lookup per node rather than a chain of isinstance tests)
_EXPR_FORMS: dict[type, Callable[[Any, Any], ir.Expr]] = {
    ast.Name: lambda p, n: ir.Var(n.id),
    ast.Constant: ExprParser.constant,
    ast.Attribute: ExprParser.attribute,
    ast.Call: ExprParser.call,
    ast.BinOp: lambda p, n: ir.BinOp(BINOPS[type(n.op)], p.expr(n.left), p.expr(n.right)),
    ast.UnaryOp: lambda p, n: ir.UnaryOp(UNARYOPS[type(n.op)], p.expr(n.operand)),
    ast.Compare: lambda p, n: ir.Compare(p.expr(n.left), tuple(CMPOPS[type(o)] for o in n.ops),
                                         tuple(p.expr(c) for c in n.comparators)),
    ast.BoolOp: lambda p, n: ir.BoolOp(BOOLOPS[type(n.op)], tuple(p.expr(v) for v in n.values)),
    ast.IfExp: lambda p, n: ir.IfExp(p.expr(n.test), p.expr(n.body), p.expr(n.orelse)),
    ast.Tuple: lambda p, n: ir.TupleExpr(tuple(p.expr(e) for e in n.elts)),
    ast.List: lambda p, n: ir.ListExpr(tuple(p.expr(e) for e in n.elts)),
    ast.Dict: ExprParser.dict_expr,
    ast.Subscript: lambda p, n: ir.Subscript(p.expr(n.value), p.expr(n.slice), n.lineno, n.col_offset + 1),
    ast.Slice: lambda p, n: ir.Slice(_optional(p, n.lower), _optional(p, n.upper), _optional(p, n.step)),
    # f-strings, as in pl.static_print(f"x: {x}")
    ast.JoinedStr: lambda p, n: ir.FString(tuple(p.fstring_part(v) for v in n.values)),
    ast.Yield: ExprParser.yield_expr,
    ast.Starred: ExprParser.starred,
}
