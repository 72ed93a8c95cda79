"""Print host IR back to pypto source.

Contract: `print_module(m)` is Python source that `parse_module` turns back into a module
equal to `m`; printing is deterministic (the same IR always prints the same text). The
text is what `ast.unparse` writes for the program's Python ast (tilecc/host/print_expr.py
for expressions; the layout of statements, blocks, decorators, `elif` chains, docstrings
and the blank line before a `def` / `class` below), written straight from the IR, with
the comments the parser kept (tilecc/host/comments.py) on lines of their own at the
indentation of what follows them, and no blank line after a comment. `print_function`,
`print_body` and `print_program` take the indentation to print at (`pad` before every
line that holds code, `unit` per level: a tab in a file indented with tabs); the lines a
multi-line string literal continues on are its value and get neither.
tests/host/test_printer_reference.py holds the output equal, on every fixture, to the
program rebuilt as a Python ast and rendered by `ast.unparse`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from tilecc.host import ir
from tilecc.host.parser import PROGRAM_PLACEHOLDER
from tilecc.host.print_expr import PREC_TEST, PREC_TUPLE, PREC_YIELD, print_expr

INDENT = "    "


class _Lines:
    """The printed lines; `after_comment` is True while the last line is a comment."""

    __slots__ = ("out", "pad", "unit", "after_comment")

    def __init__(self, pad: str, unit: str) -> None:
        self.out: list[str] = []
        self.pad = pad
        self.unit = unit
        self.after_comment = False

    def add(self, depth: int, text: str) -> None:
        self.out.append(self.pad + self.unit * depth + text)
        self.after_comment = False

    def comment(self, depth: int, text: str) -> None:
        self.out.append(self.pad + self.unit * depth + text)
        self.after_comment = True

    def definition_break(self) -> None:
        """ast.unparse sets a def or class off by a blank line, except first; a comment
        stays on the line right above what it annotates."""
        if self.out and not self.after_comment:
            self.out.append("")

    def text(self) -> str:
        return "\n".join(self.out)


def print_module(module: ir.Module) -> str:
    """Programs and functions are set off by two blank lines; consecutive one-line verbatim
    statements (imports, constants) by none."""
    out: list[str] = []
    previous: ir.Program | ir.Function | ir.Verbatim | None = None
    for item in module.items:
        if previous is not None:
            both_plain = all(isinstance(i, ir.Verbatim) and "\n" not in i.source.rstrip("\n")
                             for i in (item, previous))
            out.append("\n" if both_plain else "\n\n\n")
        if isinstance(item, ir.Verbatim):
            out.append(print_verbatim(item))
        elif isinstance(item, ir.Function):
            out.append(print_function(item))
        else:
            out.append(print_program(item))
        previous = item
    return "".join(out) + "\n"


def print_verbatim(item: ir.Verbatim) -> str:
    """The kept source, with each nested program printed in place of its placeholder line."""
    if not item.programs:
        return item.source
    programs = iter(item.programs)
    out: list[str] = []
    for line in item.source.split("\n"):
        if line.strip() == PROGRAM_PLACEHOLDER:
            out.append(print_program(next(programs), pad=line[:len(line) - len(line.lstrip())]))
        else:
            out.append(line)
    return "\n".join(out)


def print_program(program: ir.Program, pad: str = "", unit: str = INDENT) -> str:
    lines = _Lines(pad, unit)
    for text in program.comments:
        lines.comment(0, text)
    lines.definition_break()
    if program.decorated:
        lines.add(0, "@" + _decorator("program", program.decorator))
    lines.add(0, f"class {program.name}:")
    if program.doc is not None:
        lines.add(1, docstring_text(program.doc))
    elif not program.functions:
        lines.add(1, "pass")
    for func in program.functions:
        _function(lines, func, 1)
    return lines.text()


def print_function(func: ir.Function, pad: str = "", unit: str = INDENT) -> str:
    lines = _Lines(pad, unit)
    _function(lines, func, 0)
    return lines.text()


def print_body(body: tuple[ir.Stmt, ...], pad: str = "", unit: str = INDENT) -> str:
    """A function body (comments included) at level 0; `pass` for an empty one."""
    lines = _Lines(pad, unit)
    _suite(lines, body, 0, None)
    return lines.text()


@lru_cache(maxsize=256)
def docstring_text(doc: str) -> str:
    """A docstring literal as ast.unparse writes one (triple quotes, fewest escapes)."""
    return ast.unparse(ast.Module([ast.Expr(ast.Constant(doc))], []))


def _decorator(name: str, kwargs: tuple[tuple[str, ir.Expr], ...] | None) -> str:
    if kwargs is None:
        return f"pl.{name}"
    return f"pl.{name}(" + ", ".join([f"{key}={print_expr(value)}" for key, value in kwargs]) + ")"


def _function(lines: _Lines, func: ir.Function, depth: int) -> None:
    for text in func.comments:
        lines.comment(depth, text)
    lines.definition_break()
    lines.add(depth, "@" + _decorator(func.decorator_name, func.decorator))
    returns = f" -> {print_expr(func.returns)}" if func.returns is not None else ""
    lines.add(depth, f"def {func.name}({_parameters(func)}){returns}:")
    _suite(lines, func.body, depth + 1, func.doc)


def _param(p: ir.Param) -> str:
    return p.name if p.annotation is None else f"{p.name}: {print_expr(p.annotation)}"


def _parameters(func: ir.Function) -> str:
    positional = [p for p in func.params if not p.kw_only]
    kw_only = [p for p in func.params if p.kw_only]
    names = (["self"] if func.has_self else []) + [_param(p) for p in positional]
    # as in an ast: the defaults belong to the last parameters
    defaults = [p.default for p in positional if p.default is not None]
    first_default = len(names) - len(defaults)
    parts = [name if i < first_default else f"{name}={print_expr(defaults[i - first_default])}"
             for i, name in enumerate(names)]
    if kw_only:
        parts.append("*")
        parts += [_param(p) if p.default is None else f"{_param(p)}={print_expr(p.default)}" for p in kw_only]
    return ", ".join(parts)


def _suite(lines: _Lines, body: tuple[ir.Stmt, ...], depth: int, doc: str | None) -> None:
    """A body that may start with a docstring (a def's or a module's): a string constant
    first in it is written as ast.unparse writes a docstring."""
    if doc is not None:
        lines.add(depth, docstring_text(doc))
    elif not body:
        lines.add(depth, "pass")
        return
    elif (isinstance(first := body[0], ir.ExprStmt) and isinstance(first.expr, ir.Const)
          and isinstance(first.expr.value, str)):
        lines.add(depth, docstring_text(first.expr.value))
        body = body[1:]
    _statements(lines, body, depth)


def _block(lines: _Lines, body: tuple[ir.Stmt, ...], depth: int) -> None:
    if not body:
        lines.add(depth, "pass")
    else:
        _statements(lines, body, depth)


def _statements(lines: _Lines, body: tuple[ir.Stmt, ...], depth: int) -> None:
    for stmt in body:
        try:
            printer = _STATEMENTS[type(stmt)]
        except KeyError:
            raise TypeError(f"not a host IR statement: {stmt!r}") from None
        printer(lines, stmt, depth)


def _target(target: ir.Var | ir.TupleExpr | ir.Subscript) -> str:
    if isinstance(target, ir.TupleExpr):
        for item in target.items:
            if not isinstance(item, ir.Var):
                raise TypeError(f"not a variable in a tuple assignment: {item!r}")
        return print_expr(target, PREC_TUPLE)
    return print_expr(target)


def _assign(lines: _Lines, stmt: ir.Assign, depth: int) -> None:
    if stmt.annotation is None:
        lines.add(depth, f"{_target(stmt.target)} = {print_expr(stmt.value)}")
        return
    if isinstance(stmt.target, ir.TupleExpr):
        raise TypeError(f"an annotated assignment needs a single target: {stmt!r}")
    lines.add(depth, f"{print_expr(stmt.target)}: {print_expr(stmt.annotation)} = {print_expr(stmt.value)}")


def _return(lines: _Lines, stmt: ir.Return, depth: int) -> None:
    if not stmt.values:
        lines.add(depth, "return")
    elif len(stmt.values) == 1:
        lines.add(depth, "return " + print_expr(stmt.values[0]))
    else:
        lines.add(depth, "return " + print_expr(ir.TupleExpr(stmt.values)))


def _for(lines: _Lines, stmt: ir.For, depth: int) -> None:
    carried = ir.TupleExpr(stmt.iter_args or ())
    if stmt.index is None:
        target = print_expr(carried, PREC_TUPLE)
    elif stmt.iter_args is None:
        target = stmt.index.name
    else:
        target = f"{stmt.index.name}, {print_expr(carried, PREC_TEST)}"
    lines.add(depth, f"for {target} in {print_expr(stmt.iterable)}:")
    _block(lines, stmt.body, depth + 1)


def _while(lines: _Lines, stmt: ir.While, depth: int) -> None:
    lines.add(depth, f"while {print_expr(stmt.cond)}:")
    _block(lines, stmt.body, depth + 1)


def _if(lines: _Lines, stmt: ir.If, depth: int) -> None:
    lines.add(depth, f"if {print_expr(stmt.cond)}:")
    _block(lines, stmt.then, depth + 1)
    orelse = stmt.orelse
    # an else body holding exactly one if is an elif, as ast.unparse collapses it
    while len(orelse) == 1 and isinstance(inner := orelse[0], ir.If):
        lines.add(depth, f"elif {print_expr(inner.cond)}:")
        _block(lines, inner.then, depth + 1)
        orelse = inner.orelse
    if orelse:
        lines.add(depth, "else:")
        _statements(lines, orelse, depth + 1)


def _with(lines: _Lines, stmt: ir.With, depth: int) -> None:
    var = f" as {stmt.var.name}" if stmt.var is not None else ""
    lines.add(depth, f"with {print_expr(stmt.context)}{var}:")
    _block(lines, stmt.body, depth + 1)


_STATEMENTS: dict[type, Callable[[_Lines, Any, int], None]] = {
    ir.Assign: _assign,
    ir.ExprStmt: lambda lines, stmt, depth: lines.add(depth, print_expr(stmt.expr, PREC_YIELD)),
    ir.Return: _return,
    ir.For: _for,
    ir.While: _while,
    ir.If: _if,
    ir.With: _with,
    ir.Comment: lambda lines, stmt, depth: lines.comment(depth, stmt.text),
    ir.Pass: lambda lines, stmt, depth: lines.add(depth, "pass"),
    ir.Break: lambda lines, stmt, depth: lines.add(depth, "break"),
    ir.Continue: lambda lines, stmt, depth: lines.add(depth, "continue"),
}
