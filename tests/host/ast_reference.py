"""The reference the host printer is checked against: the IR rebuilt as a Python ast and
rendered by `ast.unparse`, comments carried through it as marker string statements that
`restore` turns back into comment lines (how tilecc/host/printer.py printed before it wrote
text itself). Indentation as the printer takes it (`pad`, `unit`) is applied to the
rendered text with the tokenizer, which knows which lines continue a string literal."""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from typing import Any

from tilecc.host import ir
from tilecc.host.parser import ALLOC_WINDOW_BUFFER, BINOPS, BOOLOPS, CMPOPS, PROGRAM_PLACEHOLDER, UNARYOPS

MARK = "#tilecc-comment#"
# a marker first in a body is unparsed as a docstring, in triple quotes
_MARKER_LINE = re.compile(r"^(\s*)((\'\'\'|\"\"\"|\'|\")" + re.escape(MARK) + r".*\3)$")


def marker(text: str) -> ast.stmt:
    """A string statement that `restore` turns back into the comment `text`."""
    return ast.Expr(ast.Constant(MARK + text))


def restore(source: str) -> str:
    """Replace marker lines by their comments; drop the blank line `ast.unparse` puts
    between a comment and the decorated definition that follows it."""
    out: list[str] = []
    after_comment = False
    for line in source.split("\n"):
        match = _MARKER_LINE.match(line)
        if match is not None:
            out.append(match.group(1) + ast.literal_eval(match.group(2))[len(MARK):])
            after_comment = True
            continue
        if after_comment and not line.strip():
            continue
        after_comment = False
        out.append(line)
    return "\n".join(out)


def indented(source: str, pad: str, unit: str = "    ") -> str:
    """`source` (printed at column 0, four spaces a level) with `pad` and a `unit` per level
    before every line holding code, not before the lines a string literal continues on."""
    lines = source.split("\n")
    if not pad and unit == "    ":
        return source
    inside: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            inside.update(range(tok.start[0] + 1, tok.end[0] + 1))
    out: list[str] = []
    for n, line in enumerate(lines, start=1):
        if not line or n in inside:
            out.append(line)
            continue
        code = line.lstrip(" ")
        out.append(pad + unit * ((len(line) - len(code)) // 4) + code)
    return "\n".join(out)


def reference_print_module(module: ir.Module) -> str:
    out: list[str] = []
    previous: Any = None
    for item in module.items:
        if previous is not None:
            both_plain = all(isinstance(i, ir.Verbatim) and "\n" not in i.source.rstrip("\n")
                             for i in (item, previous))
            out.append("\n" if both_plain else "\n\n\n")
        if isinstance(item, ir.Verbatim):
            out.append(reference_print_verbatim(item))
        elif isinstance(item, ir.Function):
            out.append(reference_print_function(item))
        else:
            out.append(reference_print_program(item))
        previous = item
    return "".join(out) + "\n"


def reference_print_verbatim(item: ir.Verbatim) -> str:
    if not item.programs:
        return item.source
    programs = iter(item.programs)
    out: list[str] = []
    for line in item.source.split("\n"):
        if line.strip() == PROGRAM_PLACEHOLDER:
            out.append(indented(reference_print_program(next(programs)), line[:len(line) - len(line.lstrip())]))
        else:
            out.append(line)
    return "\n".join(out)


def reference_print_program(program: ir.Program, pad: str = "", unit: str = "    ") -> str:
    return indented(_unparse([marker(c) for c in program.comments] + [program_node(program)]), pad, unit)


def reference_print_function(func: ir.Function, pad: str = "", unit: str = "    ") -> str:
    return indented(_unparse([marker(c) for c in func.comments] + [function_node(func)]), pad, unit)


def reference_print_body(body: tuple[ir.Stmt, ...], pad: str = "", unit: str = "    ") -> str:
    return indented(_unparse(_block(body)), pad, unit)


def unparse_at(node: ast.expr, precedence: int) -> str:
    """`ast.unparse` of an expression in a context of `precedence` (ast._Precedence's value)."""
    unparser = ast._Unparser()  # type: ignore[attr-defined]
    unparser.set_precedence(ast._Precedence(precedence), node)  # type: ignore[attr-defined]
    return str(unparser.visit(node))


def _unparse(nodes: list[ast.stmt]) -> str:
    return restore(ast.unparse(ast.Module(nodes, [])))


_BINOP_NODES = {token: cls for cls, token in BINOPS.items()}
_UNARY_NODES = {token: cls for cls, token in UNARYOPS.items()}
_CMP_NODES = {token: cls for cls, token in CMPOPS.items()}
_BOOL_NODES = {token: cls for cls, token in BOOLOPS.items()}
# Python 3.12+ class and function nodes carry type parameters (ast.unparse reads them);
# 3.11's ast has no such field
_NO_TYPE_PARAMS: dict[str, Any] = {"type_params": []} if sys.version_info >= (3, 12) else {}


def program_node(program: ir.Program) -> ast.ClassDef:
    body: list[ast.stmt] = []
    for func in program.functions:
        body.extend(marker(c) for c in func.comments)
        body.append(function_node(func))
    if program.doc is not None:
        body.insert(0, ast.Expr(ast.Constant(program.doc)))
    body = body or [ast.Pass()]
    decorators = [_decorator("program", program.decorator)] if program.decorated else []
    return ast.ClassDef(name=program.name, bases=[], keywords=[], body=body,
                        decorator_list=decorators, **_NO_TYPE_PARAMS)


def _dotted_node(path: str) -> ast.expr:
    head, *rest = path.split(".")
    node: ast.expr = ast.Name(head, ast.Load())
    for attr in rest:
        node = ast.Attribute(node, attr, ast.Load())
    return node


def _decorator(name: str, kwargs: tuple[tuple[str, ir.Expr], ...] | None) -> ast.expr:
    func = _dotted_node(f"pl.{name}")
    if kwargs is None:
        return func
    return ast.Call(func, [], [ast.keyword(k, expr_node(v)) for k, v in kwargs])


def function_node(func: ir.Function) -> ast.FunctionDef:
    def arg(p: ir.Param) -> ast.arg:
        return ast.arg(p.name, expr_node(p.annotation) if p.annotation is not None else None)

    positional = [p for p in func.params if not p.kw_only]
    kw_only = [p for p in func.params if p.kw_only]
    params = ([ast.arg("self")] if func.has_self else []) + [arg(p) for p in positional]
    defaults = [expr_node(p.default) for p in positional if p.default is not None]
    kw_defaults = [expr_node(p.default) if p.default is not None else None for p in kw_only]
    body = body_nodes(func.body)
    if func.doc is not None:
        body.insert(0, ast.Expr(ast.Constant(func.doc)))
    return ast.FunctionDef(
        lineno=0,
        name=func.name,
        args=ast.arguments(posonlyargs=[], args=params, vararg=None, kwonlyargs=[arg(p) for p in kw_only],
                           kw_defaults=kw_defaults, kwarg=None, defaults=defaults),
        body=body or [ast.Pass()],
        decorator_list=[_decorator(func.decorator_name, func.decorator)],
        returns=expr_node(func.returns) if func.returns is not None else None,
        **_NO_TYPE_PARAMS)


def body_nodes(body: tuple[ir.Stmt, ...]) -> list[ast.stmt]:
    nodes = [stmt_node(s) for s in body]
    for node in nodes:
        # ast.unparse looks up type comments by line number; positions are otherwise unused
        node.lineno = 0
    return nodes


def _block(body: tuple[ir.Stmt, ...]) -> list[ast.stmt]:
    return body_nodes(body) or [ast.Pass()]


def _target(target: ir.Var | ir.TupleExpr | ir.Subscript) -> ast.expr:
    if isinstance(target, ir.TupleExpr):
        return ast.Tuple([ast.Name(_tuple_item(v).name, ast.Store()) for v in target.items], ast.Store())
    return _single_target(target)


def _single_target(target: ir.Var | ir.Subscript) -> ast.Name | ast.Subscript:
    if isinstance(target, ir.Var):
        return ast.Name(target.name, ast.Store())
    return ast.Subscript(expr_node(target.value), expr_node(target.index), ast.Store())


def _tuple_item(item: ir.Expr) -> ir.Var:
    if not isinstance(item, ir.Var):
        raise TypeError(f"not a variable in a tuple assignment: {item!r}")
    return item


def stmt_node(stmt: ir.Stmt) -> ast.stmt:
    if isinstance(stmt, ir.Assign):
        if stmt.annotation is not None:
            if isinstance(stmt.target, ir.TupleExpr):
                raise TypeError(f"an annotated assignment needs a single target: {stmt!r}")
            return ast.AnnAssign(_single_target(stmt.target), expr_node(stmt.annotation),
                                 expr_node(stmt.value), simple=1)
        return ast.Assign([_target(stmt.target)], expr_node(stmt.value))
    if isinstance(stmt, ir.ExprStmt):
        return ast.Expr(expr_node(stmt.expr))
    if isinstance(stmt, ir.Return):
        if not stmt.values:
            return ast.Return(None)
        if len(stmt.values) == 1:
            return ast.Return(expr_node(stmt.values[0]))
        return ast.Return(ast.Tuple([expr_node(v) for v in stmt.values], ast.Load()))
    if isinstance(stmt, ir.For):
        carried = ast.Tuple([ast.Name(v.name, ast.Store()) for v in stmt.iter_args or ()], ast.Store())
        if stmt.index is None:
            target: ast.expr = carried
        elif stmt.iter_args is None:
            target = ast.Name(stmt.index.name, ast.Store())
        else:
            target = ast.Tuple([ast.Name(stmt.index.name, ast.Store()), carried], ast.Store())
        return ast.For(target, expr_node(stmt.iterable), _block(stmt.body), [])
    if isinstance(stmt, ir.While):
        return ast.While(expr_node(stmt.cond), _block(stmt.body), [])
    if isinstance(stmt, ir.If):
        return ast.If(expr_node(stmt.cond), _block(stmt.then), body_nodes(stmt.orelse))
    if isinstance(stmt, ir.With):
        var = ast.Name(stmt.var.name, ast.Store()) if stmt.var is not None else None
        return ast.With([ast.withitem(expr_node(stmt.context), var)], _block(stmt.body))
    if isinstance(stmt, ir.Comment):
        return marker(stmt.text)
    if isinstance(stmt, ir.Pass):
        return ast.Pass()
    if isinstance(stmt, ir.Break):
        return ast.Break()
    if isinstance(stmt, ir.Continue):
        return ast.Continue()
    raise TypeError(f"not a host IR statement: {stmt!r}")


def _keywords(kwargs: tuple[tuple[str, ir.Expr], ...]) -> list[ast.keyword]:
    return [ast.keyword(k, expr_node(v)) for k, v in kwargs]


def expr_node(expr: ir.Expr) -> ast.expr:
    if isinstance(expr, ir.Var):
        return ast.Name(expr.name, ast.Load())
    if isinstance(expr, ir.Const):
        return ast.Constant(expr.value)
    if isinstance(expr, ir.Symbol):
        return _dotted_node(expr.path)
    if isinstance(expr, ir.Attr):
        return ast.Attribute(expr_node(expr.value), expr.attr, ast.Load())
    if isinstance(expr, ir.OpCall):
        kwargs = expr.kwargs
        if expr.op == ALLOC_WINDOW_BUFFER:
            kwargs = tuple((k, v) for k, v in kwargs if k != "name")
        return ast.Call(_dotted_node(expr.op), [expr_node(a) for a in expr.args], _keywords(kwargs))
    if isinstance(expr, ir.FuncCall):
        return ast.Call(_dotted_node(f"self.{expr.func}"), [expr_node(a) for a in expr.args],
                        _keywords(expr.kwargs))
    if isinstance(expr, ir.Call):
        return ast.Call(expr_node(expr.func), [expr_node(a) for a in expr.args], _keywords(expr.kwargs))
    if isinstance(expr, ir.BinOp):
        return ast.BinOp(expr_node(expr.left), _BINOP_NODES[expr.op](), expr_node(expr.right))
    if isinstance(expr, ir.UnaryOp):
        return ast.UnaryOp(_UNARY_NODES[expr.op](), expr_node(expr.operand))
    if isinstance(expr, ir.Compare):
        return ast.Compare(expr_node(expr.left), [_CMP_NODES[o]() for o in expr.ops],
                           [expr_node(c) for c in expr.comparators])
    if isinstance(expr, ir.BoolOp):
        return ast.BoolOp(_BOOL_NODES[expr.op](), [expr_node(v) for v in expr.values])
    if isinstance(expr, ir.IfExp):
        return ast.IfExp(expr_node(expr.cond), expr_node(expr.then), expr_node(expr.orelse))
    if isinstance(expr, ir.TupleExpr):
        return ast.Tuple([expr_node(e) for e in expr.items], ast.Load())
    if isinstance(expr, ir.ListExpr):
        return ast.List([expr_node(e) for e in expr.items], ast.Load())
    if isinstance(expr, ir.FString):
        return ast.JoinedStr([expr_node(p) for p in expr.parts])
    if isinstance(expr, ir.Formatted):
        spec = expr_node(expr.spec) if expr.spec is not None else None
        return ast.FormattedValue(expr_node(expr.value), expr.conversion, spec)
    if isinstance(expr, ir.YieldExpr):
        return ast.Yield(expr_node(expr.value) if expr.value is not None else None)
    if isinstance(expr, ir.DictExpr):
        return ast.Dict([expr_node(k) for k in expr.keys], [expr_node(v) for v in expr.values])
    if isinstance(expr, ir.Subscript):
        return ast.Subscript(expr_node(expr.value), expr_node(expr.index), ast.Load())
    if isinstance(expr, ir.ListComp):
        loop = ast.comprehension(ast.Name(expr.target.name, ast.Store()), expr_node(expr.iterable),
                                 [expr_node(c) for c in expr.conditions], 0)
        return ast.ListComp(expr_node(expr.elt), [loop])
    if isinstance(expr, ir.Slice):
        return ast.Slice(*(expr_node(e) if e is not None else None
                           for e in (expr.lower, expr.upper, expr.step)))
    raise TypeError(f"not a host IR expression: {expr!r}")
