"""Statements of the host DSL: Python ast statements -> host IR statements.

Contract: `StmtParser` is the statement half of the host parser (tilecc/host/parser.py
holds the module, program and function half and subclasses it; the expression half is
ExprParser, tilecc/host/parse_expr.py). It needs `lines` (the source lines), `comments`
(the CommentPool of the file) and `chunks`, where `body` records the source lines of
each statement of a body (`Function.body_chunks`). Each statement is preceded by the
comments above it and on its own (header) lines, as Comment statements. Supported:
assignments (one target: a variable, a tuple of variables or `name[index]`; annotated;
augmented), expression statements, return, for over a pl loop op (`pl.range(...)`,
`pl.parallel`, ..., with loop-carried values, pypto's SSA while `pl.while_`), while, if,
with, pass, break, continue; anything else is a ParseError naming what was expected.
"""

from __future__ import annotations

import ast

from tilecc.host import ir
from tilecc.host.comments import CommentPool
from tilecc.host.op_forms import ALLOC_WINDOW_BUFFER
from tilecc.host.parse_expr import BINOPS, ExprParser
from tilecc.host.source_lines import first_line, header_end

WHILE_ITER = "pl.while_"
LOOP_ITERATORS = ("pl.range", "pl.parallel", "pl.unroll", "pl.pipeline", "pl.spmd", "pl.split_aiv", WHILE_ITER)


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


class StmtParser(ExprParser):
    lines: list[str]
    comments: CommentPool
    chunks: dict[int, tuple[tuple[int, int], ...]]

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
