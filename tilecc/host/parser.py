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
pypto's self-contained ones (SubWorkers); module-level functions never do. Loops iterate
over a pl op: `for i in pl.range(...)` / `pl.parallel` / ..., `for i, (a, b) in
pl.range(..., init_values=...)`, and pypto's SSA while `for (a, b) in pl.while_(...)`.

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
from typing import NoReturn
import re

from tilecc.errors import ParseError
from tilecc.host import ir
from tilecc.host.comments import CommentPool
from tilecc.host.nesting import parse_source
from tilecc.host.op_forms import ALLOC_WINDOW_BUFFER, ALLREDUCE
from tilecc.host.pypto_checks import check_program
from tilecc.host.parse_expr import BINOPS, BOOLOPS, CMPOPS, UNARYOPS, ExprParser
from tilecc.host.source_lines import (dotted, first_line, header_end, line_shared_after, preorder,
                                      program_call_names)

__all__ = ["ALLOC_WINDOW_BUFFER", "ALLREDUCE", "BINOPS", "BOOLOPS", "CMPOPS", "UNARYOPS", "parse_module",
           "parse_program"]

WHILE_ITER = "pl.while_"
LOOP_ITERATORS = ("pl.range", "pl.parallel", "pl.unroll", "pl.pipeline", "pl.spmd", "pl.split_aiv", WHILE_ITER)
FUNCTION_DECORATORS = ("pl.function", "pl.inline")
# the line that stands for a nested program in the kept source of a builder
# (a statement, so that the kept source stays valid Python even where the class was alone)
PROGRAM_PLACEHOLDER = "...  # tilecc: a @pl.program printed from the IR goes here"
MODULE_ALIASES = {"pypto.language": "pl", "pypto.language.distributed": "pld"}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")



def statement_chunks(items: list[tuple[bool, int, int]], body_first: int) -> tuple[tuple[int, int], ...] | None:
    """The source lines of each statement of a body (`Function.body_chunks`): from
    the line after the previous statement (blank lines included) to its last line; (0, 0)
    for a comment that sits on the lines of the statement after it. None if two statements
    share a line (`a = 1; b = 2`), which no line range can tell apart."""
    following: list[int | None] = []   # first line of the next statement that is not a comment
    upcoming: int | None = None
    for is_comment, first, _ in reversed(items):
        following.append(upcoming)
        if not is_comment:
            upcoming = first
    following.reverse()
    chunks: list[tuple[int, int]] = []
    prev_end = body_first - 1
    for (is_comment, first, last), after in zip(items, following):
        if is_comment and after is not None and first >= after:
            chunks.append((0, 0))
            continue
        if first <= prev_end:
            return None
        chunks.append((prev_end + 1, last))
        prev_end = last
    return tuple(chunks)


def parse_module(text: str, path: str = "<string>") -> ir.Module:
    return _Parser(text, path).module()


def parse_program(text: str, path: str = "<string>") -> ir.Program:
    """The single @pl.program of `text` (ParseError if there is not exactly one)."""
    module = parse_module(text, path)
    if len(module.programs) != 1:
        raise ParseError(path, 1, 1, f"expected exactly one @pl.program class, found {len(module.programs)}")
    return module.programs[0]


class _Parser(ExprParser):
    comments: CommentPool

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

    def body_first_line(self, nodes: list[ast.stmt], after_line: int) -> int:
        """The first line of a body that starts on a line of its own, the comment
        lines just above it included (they are the body's); 0 if it shares a line with the
        header (`def f(self): return x`) or is empty."""
        if not nodes or nodes[0].lineno <= after_line:
            return 0
        first = nodes[0].lineno
        if self.lines[first - 1][:nodes[0].col_offset].strip():
            return 0
        while first - 1 > after_line and (self.lines[first - 2].strip() or "#").startswith("#"):
            first -= 1   # comment and blank lines above the first statement
        while not self.lines[first - 1].strip():
            first += 1   # blank lines after the header stay with it
        return first

    # ------------------------------------------------------------ statements

    def body(self, nodes: list[ast.stmt], after_line: int) -> tuple[ir.Stmt, ...]:
        """Statements after source line `after_line`, each preceded by the comments above
        it and those on its own (header) lines. The source lines of each statement go to
        `self.chunks` under the body's id (statement_chunks), for a body that starts on a
        line of its own (an `elif` is the `else` body holding one `if`, from its line)."""
        out: list[ir.Stmt] = []
        items: list[tuple[bool, int, int]] = []
        prev_end = after_line
        for node in nodes:
            for line, text in self.comments.take_lines(prev_end + 1, header_end(node)):
                out.append(ir.Comment(text))
                items.append((True, line, line))
            out.append(self.stmt(node))
            prev_end = node.end_lineno or node.lineno
            items.append((False, first_line(node), prev_end))
        body = tuple(out)
        if body and (first := self.body_first_line(nodes, after_line)):
            if (chunks := statement_chunks(items, first)) is not None:
                self.chunks[id(body)] = chunks
        return body

    def stmt(self, node: ast.stmt) -> ir.Stmt:
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1:
                raise self.error(node, "chained assignment `a = b = ...` is not supported")
            return self.assign(node, node.targets[0], node.value, None)
        if isinstance(node, ast.AnnAssign):
            if node.value is None:
                raise self.error(node, "an annotated name needs a value (`x: T = ...`)")
            return self.assign(node, node.target, node.value, self.expr(node.annotation))
        if isinstance(node, ast.AugAssign):
            target = self.target(node.target)
            if not isinstance(target, ir.Var):
                raise self.error(node.target, "augmented assignment needs a variable")
            op = BINOPS[type(node.op)]
            return ir.Assign(target, ir.BinOp(op, target, self.expr(node.value)))
        if isinstance(node, ast.Expr):
            self.statement_value = node.value
            return ir.ExprStmt(self.expr(node.value))
        if isinstance(node, ast.Return):
            if node.value is None:
                return ir.Return(())
            if isinstance(node.value, ast.Tuple):
                return ir.Return(tuple(self.expr(e) for e in node.value.elts))
            return ir.Return((self.expr(node.value),))
        if isinstance(node, ast.For):
            return self.for_stmt(node)
        if isinstance(node, ast.While):
            if node.orelse:
                raise self.error(node, "`while ... else` is not supported")
            return ir.While(self.expr(node.test), self.body(node.body, header_end(node)))
        if isinstance(node, ast.If):
            then = self.body(node.body, header_end(node))
            return ir.If(self.expr(node.test), then, self.body(node.orelse, node.body[-1].end_lineno or 0))
        if isinstance(node, ast.With):
            if len(node.items) != 1:
                raise self.error(node, "expected one context manager per `with`")
            item = node.items[0]
            var = None
            if item.optional_vars is not None:
                if not isinstance(item.optional_vars, ast.Name):
                    raise self.error(item.optional_vars, "expected a variable after `as`")
                var = ir.Var(item.optional_vars.id)
            return ir.With(self.expr(item.context_expr), var, self.body(node.body, header_end(node)))
        if isinstance(node, ast.Pass):
            return ir.Pass()
        if isinstance(node, ast.Break):
            return ir.Break()
        if isinstance(node, ast.Continue):
            return ir.Continue()
        raise self.error(node, f"unsupported statement `{type(node).__name__}` in a pl.function "
                               "(expected an assignment, call, return, for, while, if or with)")

    def assign(self, node: ast.stmt, target_node: ast.expr, value_node: ast.expr,
               annotation: ir.Expr | None) -> ir.Assign:
        target = self.target(target_node)
        if annotation is not None and not isinstance(target, ir.Var):
            raise self.error(target_node, "an annotated assignment needs a single variable")
        self.assign_value = value_node if isinstance(target, ir.Var) else None
        value = self.expr(value_node)
        # (the expression parser rejects this call on any other target than one variable)
        if isinstance(target, ir.Var) and isinstance(value, ir.OpCall) and value.op == ALLOC_WINDOW_BUFFER:
            value = ir.OpCall(value.op, value.args, value.kwargs + (("name", ir.Const(target.name)),),
                              value.line, value.col)
        return ir.Assign(target, value, annotation)

    def target(self, node: ast.expr) -> ir.Var | ir.TupleExpr | ir.Subscript:
        if isinstance(node, ast.Name):
            return ir.Var(node.id)
        if isinstance(node, ast.Subscript):
            # pypto writes a window of a tensor: `C[i, j] = rhs` (not chained: `C[i][j] = rhs`)
            if not isinstance(node.value, ast.Name):
                raise self.error(node, "expected `name[index] = value`; chained subscripts cannot be assigned")
            return ir.Subscript(ir.Var(node.value.id), self.expr(node.slice), node.lineno, node.col_offset + 1)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = []
            for elt in node.elts:
                if not isinstance(elt, ast.Name):
                    raise self.error(elt, "expected a variable name in a tuple assignment")
                items.append(ir.Var(elt.id))
            return ir.TupleExpr(tuple(items))
        raise self.error(node, "expected a variable, a tuple of variables or `name[index]` on the left of `=`")

    def for_stmt(self, node: ast.For) -> ir.For:
        """pypto's loop forms: `for i in pl.range(...)` (pl.parallel / pl.unroll alike),
        `for i, (a, b) in pl.range(..., init_values=(x, y))` and the SSA while
        `for (a, b) in pl.while_(init_values=(x, y))` (no index)."""
        if node.orelse:
            raise self.error(node, "`for ... else` is not supported")
        iterable = self.expr(node.iter)
        if not isinstance(iterable, ir.OpCall) or iterable.op not in LOOP_ITERATORS:
            raise self.error(node.iter, "for loops must iterate over pl.range(), pl.parallel(), pl.unroll(), "
                                        "pl.pipeline(), pl.spmd(), pl.split_aiv() or pl.while_()")
        target = node.target
        body_start = header_end(node)
        if iterable.op == WHILE_ITER:
            if not (isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts)):
                raise self.error(target, "expected `for (a, b) in pl.while_(init_values=(x, y))`")
            iter_args = self.carried(target, iterable)
            return ir.For(None, iter_args, iterable, self.body(node.body, body_start))
        if isinstance(target, ast.Name):
            return ir.For(ir.Var(target.id), None, iterable, self.body(node.body, body_start))
        if (not isinstance(target, ast.Tuple) or len(target.elts) != 2 or not isinstance(target.elts[0], ast.Name)
                or not isinstance(target.elts[1], ast.Tuple)
                or not all(isinstance(e, ast.Name) for e in target.elts[1].elts)):
            raise self.error(target, "expected `for i in ...` or `for i, (a, b) in pl.range(..., init_values=(x, y))`")
        iter_args = self.carried(target.elts[1], iterable)
        return ir.For(ir.Var(target.elts[0].id), iter_args, iterable, self.body(node.body, body_start))

    def carried(self, names: ast.Tuple, iterable: ir.OpCall) -> tuple[ir.Var, ...]:
        """The loop-carried variables; pypto requires one init value for each."""
        inits = iterable.kwarg("init_values")
        if inits is None:
            raise self.error(names, f"loop-carried values need init_values=(...) in {iterable.op}(...)")
        if isinstance(inits, (ir.TupleExpr, ir.ListExpr)) and len(inits.items) != len(names.elts):
            raise self.error(names, f"{len(names.elts)} loop-carried values but {len(inits.items)} init_values")
        carried = tuple(ir.Var(e.id) for e in names.elts if isinstance(e, ast.Name))
        assert len(carried) == len(names.elts), "callers pass a tuple of names"
        return carried
