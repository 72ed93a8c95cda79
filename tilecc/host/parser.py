"""Parse pypto host-DSL source (`@pl.program` classes) into the host IR, via Python's ast.

Contract: `parse_module(text, path)` returns a Module whose @pl.program classes and
module-level @pl.function / @pl.inline definitions are IR and whose other top-level
statements are kept verbatim, except that @pl.program classes nested in them (pypto's
builder functions) are IR too. A top-level class without decorator that the file passes
to `pl.program(Cls)` is a program. Unsupported syntax inside a program or function raises
ParseError(path, line, col, message, source_line=...) naming what was expected; so
does a program nesting deeper than the bound that keeps the recursive parser and printer
within Python's recursion limit (tilecc/host/nesting.py).

Functions: parameters may have defaults and be keyword-only (after `*`); `*args`,
`**kwargs` and positional-only parameters are rejected. Methods take `self` except
pypto's self-contained ones (SubWorkers); module-level functions never do. Their bodies
are parsed by tilecc/host/parse_stmt.py (statements) and tilecc/host/parse_expr.py
(expressions).

Comments are kept (tilecc/host/comments.py): a comment becomes a Comment statement before
the statement it precedes or sits on, or a leading comment of the function / program it
precedes; code outside programs keeps its own text.

Surface rules (pypto's, reference/pld.md):
- `import pypto.language as pl` and `import pypto.language.distributed as pld`; other
  aliases for these modules are rejected, since printed programs use `pl` / `pld`.
- Op calls are normalised by tilecc/host/op_forms.py: short forms (`pld.window` ->
  `pld.tensor.window`, ...), mesh-mode `pld.all_reduce`, and `pld.tensor.allreduce`'s
  `target=` / `signal=` keywords (pypto's signature; `op` is keyword-only).
- `pld.tensor.alloc_window_buffer` must be assigned to one variable; its internal `name`
  kwarg is that variable's name (users never write it).
"""

from __future__ import annotations

import ast
import re
from typing import NoReturn

from tilecc.errors import ParseError
from tilecc.host import ir
from tilecc.host.comments import CommentPool
from tilecc.host.nesting import parse_source
from tilecc.host.op_forms import ALLOC_WINDOW_BUFFER, ALLREDUCE
from tilecc.host.parse_expr import BINOPS, BOOLOPS, CMPOPS, UNARYOPS
from tilecc.host.parse_stmt import StmtParser
from tilecc.host.pypto_checks import check_program
from tilecc.host.source_lines import dotted, first_line, line_shared_after, preorder, program_call_names

__all__ = ["ALLOC_WINDOW_BUFFER", "ALLREDUCE", "BINOPS", "BOOLOPS", "CMPOPS", "UNARYOPS", "parse_module",
           "parse_program"]

FUNCTION_DECORATORS = ("pl.function", "pl.inline")
# the line that stands for a nested program in the kept source of a builder
# (a statement, so that the kept source stays valid Python even where the class was alone)
PROGRAM_PLACEHOLDER = "...  # tilecc: a @pl.program printed from the IR goes here"
MODULE_ALIASES = {"pypto.language": "pl", "pypto.language.distributed": "pld"}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def parse_module(text: str, path: str = "<string>") -> ir.Module:
    return _Parser(text, path).module()


def parse_program(text: str, path: str = "<string>") -> ir.Program:
    """The single @pl.program of `text` (ParseError if there is not exactly one)."""
    module = parse_module(text, path)
    if len(module.programs) != 1:
        raise ParseError(path, 1, 1, f"expected exactly one @pl.program class, found {len(module.programs)}")
    return module.programs[0]


class _Parser(StmtParser):
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        # the lines as Python numbers them: str.splitlines would also break at \x0b, \x0c,
        # \x1c-\x1e, \x85, \u2028 and \u2029, which may sit inside strings and comments
        self.lines = _LINE_BREAK.split(text[:-1] if text.endswith("\n") else text)
        # the ast node being parsed as the right-hand side of an assignment: the only
        # place pld.tensor.alloc_window_buffer may appear (it is named after the LHS)
        self.assign_value: ast.expr | None = None
        # the value of the expression statement being parsed: the only place for `yield`
        self.statement_value: ast.expr | None = None
        # source lines of the statements of each body of the function being parsed
        self.chunks: dict[int, tuple[tuple[int, int], ...]] = {}

    def error(self, node: ast.AST | None, message: str) -> ParseError:
        line = getattr(node, "lineno", 1) or 1
        col = (getattr(node, "col_offset", 0) or 0) + 1
        source = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        return ParseError(self.path, line, col, message, source_line=source)

    # ------------------------------------------------------------ module level

    def module(self) -> ir.Module:
        tree = parse_source(self.text, self.path, self.lines)
        self.comments = CommentPool(self.text)   # of source that parses, as CommentPool requires
        self.program_calls = program_call_names(tree, self.text)
        items: list[ir.Program | ir.Function | ir.Verbatim] = []
        prev_end = 0
        for node in tree.body:
            self.check_import(node)
            first = first_line(node)
            start = self.comments.first_line(prev_end + 1, first - 1) or first
            leading = self.comments.take(prev_end + 1, first - 1)
            if isinstance(node, ast.ClassDef) and self.is_program_class(node):
                items.append(self.program(node, leading))
            elif isinstance(node, ast.FunctionDef) and self.function_decorator(node) is not None:
                items.append(self.function(node, method=False, leading=leading, start=start))
            else:
                items.append(self.verbatim(node, leading, shares_line=first == prev_end))
            prev_end = node.end_lineno or first
        trailing = self.comments.take(prev_end + 1, len(self.lines))
        if trailing:
            items.append(ir.Verbatim("\n".join(trailing)))
        return ir.Module(tuple(items))

    def verbatim(self, node: ast.stmt, leading: tuple[str, ...], shares_line: bool) -> ir.Verbatim:
        """A statement kept as its source text (comments and layout included) after its
        leading comments; @pl.program classes nested in it (builder functions) are parsed
        and their lines replaced by a placeholder line at their indentation."""
        first, last = first_line(node), node.end_lineno or node.lineno
        if shares_line or line_shared_after(self.lines, node):
            # `a = 1; b = 2`: no clean line range; the comments of the lines go first
            leading += self.comments.take(first, last)
            text = ast.unparse(ast.Module([node], []))
            lines = text.split("\n")
            first, last = 1, len(lines)
            offset = None
        else:
            lines = self.lines[first - 1:last]
            offset = first
        programs: list[ir.Program] = []
        replaced: list[tuple[int, int, str]] = []
        for inner in preorder(node):
            if inner is not node and isinstance(inner, ast.ClassDef) and self.is_program_class(inner):
                # the comment lines right above the class are its leading comments: the
                # printer puts them (and those of its header lines) there, so they must be
                # read back as the program's, not as the builder's text
                above = first_line(inner)
                while offset is not None and above - 1 > first and (above - 1) in self.comments.by_line \
                        and self.lines[above - 2].lstrip().startswith("#"):
                    above -= 1
                programs.append(self.program(inner, self.comments.take(above, first_line(inner) - 1)))
                if offset is not None:
                    header = first_line(inner) - offset
                    indent = lines[header][:len(lines[header]) - len(lines[header].lstrip())]   # tabs stay tabs
                    replaced.append((above - offset, (inner.end_lineno or inner.lineno) - offset,
                                     indent + PROGRAM_PLACEHOLDER))
        if offset is None and programs:
            raise self.error(node, "a statement holding a @pl.program must not share its lines with another")
        for start, end, placeholder in reversed(replaced):
            lines[start:end + 1] = [placeholder]
        return ir.Verbatim("\n".join(list(leading) + lines), tuple(programs))

    def check_import(self, node: ast.stmt) -> None:
        aliases: list[tuple[str, str]] = []
        if isinstance(node, ast.Import):
            aliases = [(a.name, a.asname or a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            aliases = [(f"{node.module}.{a.name}", a.asname or a.name) for a in node.names]
        for module, alias in aliases:
            expected = MODULE_ALIASES.get(module)
            if expected is not None and alias != expected:
                raise self.error(node, f"expected `import {module} as {expected}` "
                                       f"(tilecc prints programs with `{expected}.`), got alias `{alias}`")
            # an op or op namespace under another name (`from pypto.language.distributed
            # import tensor`) would hide its calls from the passes; classes and enums
            # (CamelCase: ReduceOp, Level) are fine
            parent, _, last = module.rpartition(".")
            if expected is None and last[:1].islower() and (prefix := MODULE_ALIASES.get(parent)) is not None:
                raise self.error(node, f"`{last}` imported from {parent}: tilecc reads ops by their full "
                                       f"names; use `import {parent} as {prefix}` and write `{prefix}.{last}`")

    def program_decorator(self, node: ast.ClassDef) -> ast.expr | None:
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            if dotted(target) == "pl.program":
                return deco
        return None

    def is_program_class(self, node: ast.ClassDef) -> bool:
        """A @pl.program class, or an undecorated class the file passes to `pl.program(...)`."""
        if self.program_decorator(node) is not None:
            return True
        return not node.decorator_list and node.name in self.program_calls

    def program(self, node: ast.ClassDef, leading: tuple[str, ...]) -> ir.Program:
        decorated = bool(node.decorator_list)
        comments = leading + self.comments.take(first_line(node), node.lineno)
        prev_end = node.lineno
        if len(node.decorator_list) > 1:
            raise self.error(node, "a @pl.program class takes no other decorator")
        if node.bases or node.keywords:
            raise self.error(node, "a @pl.program class has no base classes")
        functions: list[ir.Function] = []
        doc = None
        for index, stmt in enumerate(node.body):
            start = self.comments.first_line(prev_end + 1, first_line(stmt) - 1) or first_line(stmt)
            leading = self.comments.take(prev_end + 1, first_line(stmt) - 1)
            prev_end = stmt.end_lineno or stmt.lineno
            if index == 0 and (text := self.docstring(stmt)) is not None:
                doc = text
                comments += leading + self.comments.take(stmt.lineno, prev_end)
                continue
            if isinstance(stmt, ast.Pass):   # the body of a program without functions
                continue
            if not isinstance(stmt, ast.FunctionDef):
                raise self.error(stmt, "expected a @pl.function method in a @pl.program class")
            functions.append(self.function(stmt, method=True, leading=leading, start=start))
        names = [f.name for f in functions]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise self.error(node, f"function `{dup}` is defined twice in program `{node.name}`")
        deco = self.decorator_kwargs(node.decorator_list[0]) if decorated else None
        program = ir.Program(node.name, tuple(functions), deco, doc, decorated, comments)
        check_program(program, self.fail_at)
        return program

    def fail_at(self, line: int, col: int, message: str) -> NoReturn:
        source = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        raise ParseError(self.path, line, col, message, source_line=source)

    def decorator_kwargs(self, deco: ast.expr) -> tuple[tuple[str, ir.Expr], ...] | None:
        if not isinstance(deco, ast.Call):
            return None
        if deco.args:
            raise self.error(deco.args[0], "decorator arguments must be keywords")
        return self.keywords(deco.keywords)

    @staticmethod
    def docstring(stmt: ast.stmt) -> str | None:
        """The text of `stmt` when it is a string literal statement (a docstring)."""
        if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)):
            return stmt.value.value
        return None

    @staticmethod
    def function_decorator(node: ast.FunctionDef) -> str | None:
        """`function` / `inline` for a function whose only decorator is @pl.function(...) /
        @pl.inline, else None."""
        if len(node.decorator_list) != 1:
            return None
        deco = node.decorator_list[0]
        name = dotted(deco.func if isinstance(deco, ast.Call) else deco)
        return name[3:] if name in FUNCTION_DECORATORS else None

    def function(self, node: ast.FunctionDef, method: bool, leading: tuple[str, ...], start: int) -> ir.Function:
        """`start` is the first line of the definition's leading comments (else of its decorators)."""
        decorator_name = self.function_decorator(node)
        if decorator_name is None:
            raise self.error(node, f"expected exactly one @pl.function(...) decorator on `{node.name}`")
        deco = node.decorator_list[0]
        args = node.args
        if args.vararg or args.kwarg or args.posonlyargs:
            bad = args.vararg or args.kwarg or args.posonlyargs[0]
            raise self.error(bad, "`*args`, `**kwargs` and positional-only parameters are not supported "
                                  "in a pl.function")
        has_self = bool(args.args) and args.args[0].arg == "self"
        if has_self and not method:
            raise self.error(node, f"module-level function `{node.name}` cannot take `self`")
        positional = args.args[1:] if has_self else args.args
        first_default = len(positional) - len(args.defaults)
        params = [ir.Param(a.arg, self.expr(a.annotation) if a.annotation else None,
                           self.expr(args.defaults[i - first_default]) if i >= first_default else None)
                  for i, a in enumerate(positional)]
        if has_self and first_default < 0:
            raise self.error(args.args[0], "`self` cannot have a default value")
        params += [ir.Param(a.arg, self.expr(a.annotation) if a.annotation else None,
                            self.expr(d) if d is not None else None, kw_only=True)
                   for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        body_nodes = node.body
        signature_end = max([node.lineno] + [n.end_lineno or n.lineno for n in ast.walk(node.args)
                                             if isinstance(n, (ast.arg, ast.expr))]
                            + ([node.returns.end_lineno or node.lineno] if node.returns else []))
        comments = leading + self.comments.take(first_line(node), signature_end)
        doc = None
        if (text := self.docstring(body_nodes[0])) is not None:
            doc = text
            signature_end = body_nodes[0].end_lineno or signature_end
            comments += self.comments.take(body_nodes[0].lineno, signature_end)
            body_nodes = body_nodes[1:]
        self.chunks = {}
        body = self.body(body_nodes, signature_end)
        return ir.Function(node.name, tuple(params), self.expr(node.returns) if node.returns else None,
                           body, self.decorator_kwargs(deco), doc, has_self, decorator_name, comments,
                           (start, self.body_first_line(body_nodes, signature_end), node.end_lineno or node.lineno),
                           self.chunks)
