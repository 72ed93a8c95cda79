"""SynthesizeAllReduceSignals: give every host `pld.tensor.allreduce(data, op=...)` an
explicit signal (spec 002, lineage version of reference/pld.md).

Contract, step by step as the spec:
1. Only host orchestrators (level HOST and type Orchestration or role Orchestrator) are
   rewritten; every other function is returned as it is.
2. Names are reserved program-wide (every variable name plus every alloc_window_buffer
   `name`) with one counter; a suffix n is used only when `__allreduce_signal_world_size_n`,
   `__allreduce_signal_buf_n` and `__allreduce_signal_n` are all free. Functions are
   processed in name order (pypto keeps them in a name-sorted map); within one function
   its signal suffixes are drawn first, then its `__allreduce_result_n` names.
3. Implicit (one-argument) calls are grouped by the lineage of their data argument:
   aliases, `pld.tensor.window(buf, ...)` -> buf, an allreduce result -> its data,
   loop-carried values (inside the loop) -> their initial value, `pl.yield_` outputs ->
   the yielded value, up to the first variable with no such definition (normally the
   alloc_window_buffer LHS or a parameter). A value that leaves an if / for / while (a
   join: pypto's return_vars after ConvertToSSA) keeps the lineage all its incoming
   values share, and is a root of its own when they differ (`_LineageScan.visit_join`);
   pypto's SSA pass makes every join a root, which splits more signals but never
   fewer, so both are safe and ours keeps one signal per buffer as its docs describe.
   A data argument that is not a variable (`pair[0]`) is a group of its own for every
   call, as in pypto.
   allgather / all_to_all / all_to_all_v results live in their `target` window (their
   2nd argument: pypto's window-as-result convention), so lineage follows that argument,
   as pypto's ResolveLineageKey does.
4. One signal per group, core_num = the group's maximum, bindings hoisted to the top of
   the body in order of first appearance; implicit calls (in loops too) get their group's
   signal as 2nd positional argument, all kwargs kept; explicit calls are left alone.
5. `return pld.tensor.allreduce(...)` is lifted to `__allreduce_result_n = ...` + return.
6. ValueError (AllReduceSignalError) for a positional argument count other than 1 or 2 and
   for an allreduce nested inside another expression.
7. A program without changes is returned as the same object.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Hashable, Iterator

from tilecc.host import ir
from tilecc.host.parser import ALLOC_WINDOW_BUFFER, ALLREDUCE
from tilecc.host.pass_manager import HostPass, PassProperties

# op -> index of the argument whose buffer the result lives in (lineage step 3)
LINEAGE_ARG = {"pld.tensor.window": 0, ALLREDUCE: 0, "pld.tensor.allgather": 1,
               "pld.tensor.all_to_all": 1, "pld.tensor.all_to_all_v": 1,
               "pl.yield_": 0}
YIELD = "pl.yield_"
NESTED_MESSAGE = ("pld.tensor.allreduce must be a direct assignment, expression statement, or return "
                  "value before allreduce signal synthesis.")


class AllReduceSignalError(ValueError):
    """The spec's ValueError, with the source position of the offending call when known."""

    def __init__(self, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col


def is_allreduce(expr: ir.Expr) -> bool:
    return isinstance(expr, ir.OpCall) and expr.op == ALLREDUCE


def check_arg_count(call: ir.OpCall) -> None:
    if len(call.args) not in (1, 2):
        raise AllReduceSignalError(f"pld.tensor.allreduce expects target[, signal], got {len(call.args)} "
                                   "positional arguments", call.line, call.col)


def core_num_of(call: ir.OpCall) -> int:
    value = call.kwarg("core_num")
    if value is None:
        return 1
    if not (isinstance(value, ir.Const) and type(value.value) is int and value.value > 0):
        raise AllReduceSignalError("pld.tensor.allreduce core_num must be a positive integer constant "
                                   "for signal synthesis", call.line, call.col)
    return value.value


def reserved_names(program: ir.Program) -> set[str]:
    """Every variable name of the program and every alloc_window_buffer `name` (step 2)."""
    names: set[str] = set()
    for func in program.functions:
        names.update(p.name for p in func.params)
        for stmt in ir.walk_stmts(func.body):
            if isinstance(stmt, ir.Assign):
                names.update(t.name for t in ir.target_vars(stmt.target))
            elif isinstance(stmt, ir.For):
                if stmt.index is not None:
                    names.add(stmt.index.name)
                names.update(v.name for v in stmt.iter_args or ())
            elif isinstance(stmt, ir.With) and stmt.var is not None:
                names.add(stmt.var.name)
            for top in ir.stmt_exprs(stmt):
                for expr in ir.walk_expr(top):
                    if isinstance(expr, ir.Var):
                        names.add(expr.name)
                    elif isinstance(expr, ir.OpCall) and expr.op == ALLOC_WINDOW_BUFFER:
                        name = expr.kwarg("name")
                        if isinstance(name, ir.Const) and isinstance(name.value, str) and name.value:
                            names.add(name.value)
    return names


class _NameSource:
    """The program-wide counter and reserved set of step 2."""

    def __init__(self, used: set[str]) -> None:
        self.used = used
        self.next_id = 0

    def signal_names(self) -> tuple[str, str, str]:
        while True:
            n = self.next_id
            self.next_id += 1
            names = (f"__allreduce_signal_world_size_{n}", f"__allreduce_signal_buf_{n}",
                     f"__allreduce_signal_{n}")
            if not any(name in self.used for name in names):
                self.used.update(names)
                return names

    def result_name(self) -> str:
        while True:
            name = f"__allreduce_result_{self.next_id}"
            self.next_id += 1
            if name not in self.used:
                self.used.add(name)
                return name


def assigned_names(stmt: ir.Stmt) -> list[str]:
    """Names a compound statement binds: assignment targets, loop indices and carried
    values, `with ... as` variables, nested statements included."""
    names: list[str] = []
    for inner in ir.walk_stmts((stmt,)):
        if isinstance(inner, ir.Assign):
            names.extend(t.name for t in ir.target_vars(inner.target))
        elif isinstance(inner, ir.For):
            names.extend(v.name for v in ((inner.index,) if inner.index else ()) + (inner.iter_args or ()))
        elif isinstance(inner, ir.With) and inner.var is not None:
            names.append(inner.var.name)
    return names


class _LineageScan:
    """Pre-scan of one host function (steps 3 and 6): validates every allreduce and
    assigns each implicit call, in visit order, to a lineage group."""

    def __init__(self) -> None:
        self.env: dict[str, Hashable] = {}
        self.fresh = itertools.count()
        self.group_of_key: dict[Hashable, int] = {}
        self.group_core_num: list[int] = []
        self.call_groups: list[int] = []     # group of each implicit call, in visit order
        self.lifted_returns = 0

    def key_of(self, expr: ir.Expr) -> Hashable | None:
        if isinstance(expr, ir.Var):
            return self.env.get(expr.name, ("free", expr.name))
        if isinstance(expr, ir.OpCall) and (index := LINEAGE_ARG.get(expr.op)) is not None:
            if len(expr.args) > index:
                return self.key_of(expr.args[index])
        return None

    def define(self, var: ir.Var, value: ir.Expr | None) -> None:
        key = self.key_of(value) if value is not None else None
        self.env[var.name] = key if key is not None else ("def", next(self.fresh), var.name)

    def check_nested(self, expr: ir.Expr, allowed_top: bool) -> None:
        for node in ir.walk_expr(expr):
            if is_allreduce(node):
                check_arg_count(node)  # type: ignore[arg-type]
                if not (allowed_top and node is expr):
                    raise AllReduceSignalError(NESTED_MESSAGE, node.line, node.col)  # type: ignore[union-attr]

    def visit_call(self, call: ir.OpCall) -> None:
        if len(call.args) != 1:
            return
        data = call.args[0]
        key = self.key_of(data) if isinstance(data, ir.Var) else ("call", next(self.fresh))
        group = self.group_of_key.get(key)
        if group is None:
            group = self.group_of_key[key] = len(self.group_core_num)
            self.group_core_num.append(1)
        self.group_core_num[group] = max(self.group_core_num[group], core_num_of(call))
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
                self.visit_call(stmt.value)  # type: ignore[arg-type]
            if isinstance(stmt.target, ir.Var):
                self.define(stmt.target, stmt.value)
            elif isinstance(stmt.target, ir.Subscript):
                for var in ir.target_vars(stmt.target):   # a new value of C: a root of its own
                    self.define(var, None)
            else:
                # `a, b = pl.yield_(x, y)` binds each output to its yielded value
                values = stmt.value.args if (isinstance(stmt.value, ir.OpCall) and stmt.value.op == YIELD
                                             and len(stmt.value.args) == len(stmt.target.items)) else None
                for i, var in enumerate(stmt.target.items):
                    self.define(var, values[i] if values else None)  # type: ignore[arg-type]
        elif isinstance(stmt, ir.ExprStmt):
            self.check_nested(stmt.expr, allowed_top=True)
            if is_allreduce(stmt.expr):
                self.visit_call(stmt.expr)  # type: ignore[arg-type]
        elif isinstance(stmt, ir.Return):
            for value in stmt.values:
                self.check_nested(value, allowed_top=True)
                if is_allreduce(value):
                    self.visit_call(value)  # type: ignore[arg-type]
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

    def __init__(self, signals: list[ir.Var], call_groups: list[int], names: _NameSource) -> None:
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
            call = self.with_signal(stmt.value)  # type: ignore[arg-type]
            return [stmt if call is stmt.value else ir.Assign(stmt.target, call, stmt.annotation)]
        if isinstance(stmt, ir.ExprStmt) and is_allreduce(stmt.expr):
            call = self.with_signal(stmt.expr)  # type: ignore[arg-type]
            return [stmt if call is stmt.expr else ir.ExprStmt(call)]
        if isinstance(stmt, ir.Return) and any(is_allreduce(v) for v in stmt.values):
            prelude: list[ir.Stmt] = []
            values: list[ir.Expr] = []
            for value in stmt.values:
                if is_allreduce(value):
                    result = ir.Var(self.names.result_name())
                    prelude.append(ir.Assign(result, self.with_signal(value)))  # type: ignore[arg-type]
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


def signal_bindings(names: tuple[str, str, str], core_num: int) -> list[ir.Stmt]:
    """The three hoisted bindings of one signal (spec 002, Algorithm step 3)."""
    world_size_name, buf_name, signal_name = names
    world_size = ir.Var(world_size_name)
    size = ir.BinOp("*", ir.BinOp("*", world_size, ir.Const(core_num)), ir.OpCall("pl.INT32.get_byte"))
    alloc = ir.OpCall(ALLOC_WINDOW_BUFFER, (size,), (("name", ir.Const(buf_name)),))
    window = ir.OpCall("pld.tensor.window", (ir.Var(buf_name), ir.ListExpr((world_size, ir.Const(core_num)))),
                       (("dtype", ir.Symbol("pl.INT32")),))
    return [ir.Assign(world_size, ir.OpCall("pld.system.world_size")),
            ir.Assign(ir.Var(buf_name), alloc, ir.Symbol("pl.Ptr")),
            ir.Assign(ir.Var(signal_name), window)]


def synthesize_function(func: ir.Function, names: _NameSource) -> ir.Function:
    if not func.is_host_orchestrator:
        return func
    scan = _LineageScan()
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
    return dataclasses.replace(func, body=tuple(hoisted) + body)


def synthesize_allreduce_signals(program: ir.Program) -> ir.Program:
    names = _NameSource(reserved_names(program))
    rewritten = {f.name: synthesize_function(f, names)
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

    def run_program(self, program: ir.Program) -> ir.Program:
        return synthesize_allreduce_signals(program)
