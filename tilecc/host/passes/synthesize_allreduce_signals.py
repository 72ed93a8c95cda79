"""SynthesizeAllReduceSignals: give every host `pld.tensor.allreduce(data, op=...)` an
explicit signal (spec 002, lineage version of reference/pld.md).

Contract, step by step as the spec:
1. Only host orchestrators (level HOST and type Orchestration or role Orchestrator) of
   @pl.program classes are rewritten; every other function is returned as it is. A
   module-level `@pl.function` orchestrator (outside any program class) is not rewritten
   either: pypto's pass runs on programs and never sees it.
2. Names are reserved program-wide (every variable name, those used only in a function's
   signature too, plus every alloc_window_buffer `name`) with one counter; a suffix n is
   used only when `__allreduce_signal_world_size_n`, `__allreduce_signal_buf_n` and
   `__allreduce_signal_n` are all free. Functions are processed in name order (pypto
   keeps them in a name-sorted map); within one function its signal suffixes are drawn
   first, then its `__allreduce_result_n` names.
3. Implicit (one-argument) calls are grouped by the lineage of their data argument, a
   variable (any other data expression is a group of its own), followed through aliases, `pld.tensor.window(buf, ...)` -> buf, an allreduce
   result -> its data, loop-carried values (inside the loop) -> their initial value,
   `pl.yield_` outputs -> the yielded value, up to the first variable with no such
   definition (normally the alloc_window_buffer LHS or a parameter). A value that leaves
   an if / for / while (a join: pypto's return_vars after ConvertToSSA) keeps the lineage
   all its incoming values share, and is a root of its own when they differ
   (`_LineageScan.visit_join`); pypto's SSA pass makes every join a root, which splits
   more signals but never fewer, so both are safe and ours keeps one signal per buffer as
   its docs describe. A data argument that is not a variable (`pair[0]`,
   `pld.window(buf, ...)`) is a group of its own for every call, and the result of a
   collective over a non-variable (`e = allreduce(pld.window(buf, ...))`) is a root of
   its own; a view or a yielded value (`pl.yield_(pld.window(buf, ...))`) stays buf's.
   allgather / all_to_all / all_to_all_v results live in their `target` window (their
   2nd argument: pypto's window-as-result convention), so lineage follows that argument,
   as pypto's ResolveLineageKey does.
4. One signal per group, core_num = the group's maximum (module-level int constants and
   constant expressions folded, tilecc/host/constants.py; an int expression over names
   pypto reads when it builds the program, such as a builder's parameter, is kept as
   written and must be the same on every call of its group that asks for more than one
   lane), bindings hoisted to the top of
   the body in order of first appearance, after a leading `pl.func_attr({...})` (the
   docstring is kept first); implicit calls (in loops too) get their group's signal as
   2nd positional argument, all kwargs kept; explicit calls are left alone.
5. `return pld.tensor.allreduce(...)` is lifted to `__allreduce_result_n = ...` + return.
6. AllReduceSignalError (a ValueError and a PassError, at the call's line:col) for a
   positional argument count other than 1 or 2, for an allreduce nested inside another
   expression, and for the arguments pypto's user-facing function rejects
   (allreduce_checks.py), on every function of the program.
7. A program without changes is returned as the same object.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Hashable, Iterator
from typing import TypeGuard

from tilecc.host import ir
from tilecc.host.constants import Scope
from tilecc.host.function_index import function_index
from tilecc.host.ops import LINEAGE_ARGUMENT
from tilecc.host.parser import ALLOC_WINDOW_BUFFER, ALLREDUCE
from tilecc.host.pass_manager import HostPass, PassProperties
from tilecc.host.print_expr import print_expr
from tilecc.host.passes.allreduce_checks import AllReduceSignalError, check_arg_count, check_call
from tilecc.host.passes.signal_names import NameSource, assigned_names, reserved_names

__all__ = ["AllReduceSignalError", "SynthesizeAllReduceSignals", "synthesize_allreduce_signals"]

# op -> index of the argument whose buffer the result lives in (lineage step 3)
LINEAGE_ARG = LINEAGE_ARGUMENT
YIELD = "pl.yield_"
COLLECTIVES = frozenset(LINEAGE_ARG) - {"pld.tensor.window", YIELD}
FUNC_ATTR = "pl.func_attr"
NESTED_MESSAGE = ("pld.tensor.allreduce must be a direct assignment, expression statement, or return "
                  "value before allreduce signal synthesis.")


def is_allreduce(expr: ir.Expr) -> TypeGuard[ir.OpCall]:
    return isinstance(expr, ir.OpCall) and expr.op == ALLREDUCE


def local_names(func: ir.Function) -> set[str]:
    """The function's own variables (the names it binds, from its index): they shadow
    module constants (pypto's parser folds a name only when it is not a DSL variable)."""
    return set(function_index(func).bound)


def check_function(scope: Scope, local: set[str], calls: list[ir.OpCall]) -> None:
    """pypto's argument checks (allreduce_checks.py) on `calls`, every allreduce call of a
    function in visit order (collected by the program's one name walk, reserved_names)."""
    for call in calls:
        check_call(call, scope, local)


def statement_allreduces(body: tuple[ir.Stmt, ...]) -> int:
    """How many allreduces are a whole statement's value (assigned, expression statement,
    returned): when that is every allreduce of the function, none is nested."""
    count = 0
    for stmt in ir.walk_stmts(body):
        values = ((stmt.value,) if isinstance(stmt, ir.Assign) else (stmt.expr,) if isinstance(stmt, ir.ExprStmt)
                  else stmt.values if isinstance(stmt, ir.Return) else ())
        count += sum(1 for value in values if is_allreduce(value))
    return count


def widest_core_num(a: int | ir.Expr, b: int | ir.Expr, call: ir.OpCall) -> int | ir.Expr:
    """The larger of two core_nums of one group. An expression tilecc cannot fold (a
    builder's parameter) is at least 1, so it absorbs 1 and itself; against any other
    value which is wider is unknown until pypto decorates the class."""
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    shown = [print_expr(x) if not isinstance(x, int) else str(x) for x in (a, b)]
    raise AllReduceSignalError(f"pld.tensor.allreduce core_num={shown[1]} and core_num={shown[0]} of one buffer's "
                               "implicit allreduces cannot be compared before the program is built; "
                               "give them the same core_num or pass an explicit signal", call.line, call.col)


class _LineageScan:
    """Pre-scan of one host function (steps 3 and 6): validates every allreduce and
    assigns each implicit call, in visit order, to a lineage group."""

    def __init__(self, scope: Scope, local: set[str]) -> None:
        self.scope = scope
        self.local = local
        self.env: dict[str, Hashable] = {}
        self.fresh = itertools.count()
        self.group_of_key: dict[Hashable, int] = {}
        self.group_core_num: list[int | ir.Expr] = []
        self.call_groups: list[int] = []     # group of each implicit call, in visit order
        self.lifted_returns = 0
        self.any_nested = True   # False: no allreduce inside another expression, nothing to look for

    def key_of(self, expr: ir.Expr) -> Hashable | None:
        if isinstance(expr, ir.Var):
            return self.env.get(expr.name, ("free", expr.name))
        if isinstance(expr, ir.OpCall) and (index := LINEAGE_ARG.get(expr.op)) is not None:
            if len(expr.args) <= index:
                return None
            arg = expr.args[index]
            # a collective over a non-variable is a group of its own (reference/pld.md), so
            # its result is a root of its own too; a view or a yielded value is followed
            # into its expression (`pl.yield_(pld.window(buf, ...))` is buf's lineage)
            if expr.op in COLLECTIVES and not isinstance(arg, ir.Var):
                return None
            return self.key_of(arg)
        return None

    def define(self, var: ir.Var, value: ir.Expr | None) -> None:
        key = self.key_of(value) if value is not None else None
        self.env[var.name] = key if key is not None else ("def", next(self.fresh), var.name)

    def check_nested(self, expr: ir.Expr, allowed_top: bool) -> None:
        if not self.any_nested:   # every allreduce is a statement's value (statement_allreduces)
            return
        for node in ir.walk_expr(expr):
            if is_allreduce(node):
                check_arg_count(node)
                if not (allowed_top and node is expr):
                    raise AllReduceSignalError(NESTED_MESSAGE, node.line, node.col)

    def visit_call(self, call: ir.OpCall) -> None:
        if len(call.args) != 1:
            return
        data = call.args[0]
        key = self.key_of(data) if isinstance(data, ir.Var) else ("call", next(self.fresh))
        group = self.group_of_key.get(key)
        if group is None:
            group = self.group_of_key[key] = len(self.group_core_num)
            self.group_core_num.append(1)
        core_num = check_call(call, self.scope, self.local)
        assert core_num is not None   # check_call rejects an implicit call without one
        self.group_core_num[group] = widest_core_num(self.group_core_num[group], core_num, call)
        self.call_groups.append(group)

    def visit_body(self, body: tuple[ir.Stmt, ...]) -> None:
        for stmt in body:
            self.visit_stmt(stmt)

    def visit_stmt(self, stmt: ir.Stmt) -> None:
        if isinstance(stmt, ir.Assign):
            self.check_nested(stmt.value, allowed_top=True)
            if stmt.annotation is not None:
                self.check_nested(stmt.annotation, allowed_top=False)
            if is_allreduce(stmt.value):
                self.visit_call(stmt.value)
            if isinstance(stmt.target, ir.Var):
                self.define(stmt.target, stmt.value)
            elif isinstance(stmt.target, ir.Subscript):
                for var in ir.target_vars(stmt.target):   # a new value of C: a root of its own
                    self.define(var, None)
            else:
                # `a, b = pl.yield_(x, y)` binds each output to its yielded value
                values = stmt.value.args if (isinstance(stmt.value, ir.OpCall) and stmt.value.op == YIELD
                                             and len(stmt.value.args) == len(stmt.target.items)) else None
                for i, item in enumerate(stmt.target.items):
                    if isinstance(item, ir.Var):   # the parser allows only names here
                        self.define(item, values[i] if values else None)
        elif isinstance(stmt, ir.ExprStmt):
            self.check_nested(stmt.expr, allowed_top=True)
            if is_allreduce(stmt.expr):
                self.visit_call(stmt.expr)
        elif isinstance(stmt, ir.Return):
            for value in stmt.values:
                self.check_nested(value, allowed_top=True)
                if is_allreduce(value):
                    self.visit_call(value)
                    self.lifted_returns += 1
        else:
            for expr in ir.stmt_exprs(stmt):
                self.check_nested(expr, allowed_top=False)
            if isinstance(stmt, ir.For):
                if stmt.index is not None:
                    self.define(stmt.index, None)
                inits = stmt.iterable.kwarg("init_values") if isinstance(stmt.iterable, ir.OpCall) else None
                init_items = inits.items if isinstance(inits, (ir.TupleExpr, ir.ListExpr)) else ()
                for i, var in enumerate(stmt.iter_args or ()):
                    self.define(var, init_items[i] if i < len(init_items) else None)
            elif isinstance(stmt, ir.With) and stmt.var is not None:
                self.define(stmt.var, None)
            if isinstance(stmt, ir.With):   # a scope, not a join: definitions flow through
                self.visit_body(stmt.body)
            elif isinstance(stmt, (ir.For, ir.While, ir.If)):
                self.visit_join(stmt)

    def visit_join(self, stmt: ir.For | ir.While | ir.If) -> None:
        """Each branch / the loop body starts from the definitions before `stmt`. After it,
        a name assigned inside holds one of several incoming values (pypto's if / loop
        return_vars after ConvertToSSA): the value before the statement (an if without
        that branch, a loop that runs zero times), each branch's or the body's last
        definition, and for a loop's `pl.yield_` outputs the matching init value. If all of
        them have one lineage the name keeps it; otherwise it is a root of its own, so
        buffers of different device coverage never share a signal."""
        before = self.env
        ends: list[dict[str, Hashable]] = []
        for inner in ir.child_bodies(stmt):
            self.env = dict(before)
            self.visit_body(inner)
            ends.append(self.env)
        if not isinstance(stmt, ir.If) or not stmt.orelse:
            ends.append(before)
        self.env = before
        inits = self.yield_inits(stmt) if isinstance(stmt, ir.For) else {}
        for name in dict.fromkeys(assigned_names(stmt)):
            keys = {end[name] for end in ends if name in end}
            if name in inits:
                keys.add(inits[name])
            self.env[name] = keys.pop() if len(keys) == 1 else ("join", next(self.fresh), name)

    def yield_inits(self, loop: ir.For) -> dict[str, Hashable]:
        """Lineage of the init value behind each `pl.yield_` output of a loop's body."""
        inits = loop.iterable.kwarg("init_values") if isinstance(loop.iterable, ir.OpCall) else None
        items = inits.items if isinstance(inits, (ir.TupleExpr, ir.ListExpr)) else ()
        out: dict[str, Hashable] = {}
        for stmt in loop.body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.OpCall) and stmt.value.op == YIELD:
                for target, init in zip(ir.target_vars(stmt.target), items):
                    key = self.key_of(init)
                    if isinstance(target, ir.Var) and key is not None:
                        out[target.name] = key
        return out


class _Rewriter:
    """Step 4 and 5 rewrite of one function body, consuming the scan's groups in visit order."""

    def __init__(self, signals: list[ir.Var], call_groups: list[int], names: NameSource) -> None:
        self.signals = signals
        self.groups: Iterator[int] = iter(call_groups)
        self.names = names

    def with_signal(self, call: ir.OpCall) -> ir.OpCall:
        if len(call.args) == 2:
            return call
        signal = self.signals[next(self.groups)]
        return ir.OpCall(call.op, (call.args[0], signal), call.kwargs, call.line, call.col)

    def body(self, body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for stmt in body:
            out.extend(self.stmt(stmt))
        return body if all(a is b for a, b in zip(out, body)) and len(out) == len(body) else tuple(out)

    def stmt(self, stmt: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(stmt, ir.Assign) and is_allreduce(stmt.value):
            call = self.with_signal(stmt.value)
            return [stmt if call is stmt.value else ir.Assign(stmt.target, call, stmt.annotation)]
        if isinstance(stmt, ir.ExprStmt) and is_allreduce(stmt.expr):
            call = self.with_signal(stmt.expr)
            return [stmt if call is stmt.expr else ir.ExprStmt(call)]
        if isinstance(stmt, ir.Return) and any(is_allreduce(v) for v in stmt.values):
            prelude: list[ir.Stmt] = []
            values: list[ir.Expr] = []
            for value in stmt.values:
                if is_allreduce(value):
                    result = ir.Var(self.names.result_name())
                    prelude.append(ir.Assign(result, self.with_signal(value)))
                    values.append(result)
                else:
                    values.append(value)
            return prelude + [ir.Return(tuple(values))]
        if isinstance(stmt, (ir.For, ir.While, ir.With)):
            body = self.body(stmt.body)
            if body is stmt.body:
                return [stmt]
            if isinstance(stmt, ir.For):
                return [ir.For(stmt.index, stmt.iter_args, stmt.iterable, body)]
            if isinstance(stmt, ir.While):
                return [ir.While(stmt.cond, body)]
            return [ir.With(stmt.context, stmt.var, body)]
        if isinstance(stmt, ir.If):
            then, orelse = self.body(stmt.then), self.body(stmt.orelse)
            if then is stmt.then and orelse is stmt.orelse:
                return [stmt]
            return [ir.If(stmt.cond, then, orelse)]
        return [stmt]


def signal_bindings(names: tuple[str, str, str], core_num: int | ir.Expr) -> list[ir.Stmt]:
    """The three hoisted bindings of one signal (spec 002, Algorithm step 3); a core_num
    tilecc cannot fold is written as the user wrote it (pypto would print its value)."""
    world_size_name, buf_name, signal_name = names
    world_size = ir.Var(world_size_name)
    lanes = ir.Const(core_num) if isinstance(core_num, int) else core_num
    size = ir.BinOp("*", ir.BinOp("*", world_size, lanes), ir.OpCall("pl.INT32.get_byte"))
    alloc = ir.OpCall(ALLOC_WINDOW_BUFFER, (size,), (("name", ir.Const(buf_name)),))
    window = ir.OpCall("pld.tensor.window", (ir.Var(buf_name), ir.ListExpr((world_size, lanes))),
                       (("dtype", ir.Symbol("pl.INT32")),))
    return [ir.Assign(world_size, ir.OpCall("pld.system.world_size")),
            ir.Assign(ir.Var(buf_name), alloc, ir.Symbol("pl.Ptr")),
            ir.Assign(ir.Var(signal_name), window)]


def hoist_index(body: tuple[ir.Stmt, ...]) -> int:
    """Where the hoisted bindings go: after a leading `pl.func_attr({...})` (pypto's
    function metadata, documented as the body's first statement) and the comments before
    it, else at the very top (the docstring is Function.doc and is printed first)."""
    first = next((i for i, s in enumerate(body) if not isinstance(s, ir.Comment)), len(body))
    if (first < len(body) and isinstance(lead := body[first], ir.ExprStmt)
            and isinstance(lead.expr, ir.OpCall) and lead.expr.op == FUNC_ATTR):
        return first + 1
    return 0


def synthesize_function(func: ir.Function, names: NameSource, scope: Scope,
                        calls: list[ir.OpCall]) -> ir.Function:
    if not calls:   # nothing to check or rewrite
        return func
    local = local_names(func)
    check_function(scope, local, calls)
    if not func.is_host_orchestrator:
        return func
    scan = _LineageScan(scope, local)
    scan.any_nested = len(calls) > statement_allreduces(func.body)
    scan.visit_body(func.body)
    if not scan.call_groups and not scan.lifted_returns:
        return func
    hoisted: list[ir.Stmt] = []
    signals: list[ir.Var] = []
    for core_num in scan.group_core_num:
        signal_names = names.signal_names()
        hoisted.extend(signal_bindings(signal_names, core_num))
        signals.append(ir.Var(signal_names[2]))
    body = _Rewriter(signals, scan.call_groups, names).body(func.body)
    at = hoist_index(body)
    return dataclasses.replace(func, body=body[:at] + tuple(hoisted) + body[at:])


def synthesize_allreduce_signals(program: ir.Program, scope: Scope | None = None) -> ir.Program:
    """The pass on one program; `scope` holds the module-level int constants and names
    visible in it (tilecc/host/constants.py), none when the program is run on its own."""
    allreduces: dict[str, list[ir.OpCall]] = {}
    names = NameSource(reserved_names(program, allreduces))
    rewritten = {f.name: synthesize_function(f, names, scope or Scope(), allreduces[f.name])
                 for f in sorted(program.functions, key=lambda f: f.name)}
    functions = tuple(rewritten[f.name] for f in program.functions)
    if all(a is b for a, b in zip(functions, program.functions)):
        return program
    return dataclasses.replace(program, functions=functions)


class SynthesizeAllReduceSignals(HostPass):
    name = "synthesize-allreduce-signals"
    display_name = "SynthesizeAllReduceSignals"
    summary = "give every host pld.tensor.allreduce without a signal a shared per-buffer signal"
    properties = PassProperties()   # spec 002: required {}, produced {}, invalidated {}

    def run_program(self, program: ir.Program, scope: Scope) -> ir.Program:
        return synthesize_allreduce_signals(program, scope)
