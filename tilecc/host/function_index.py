"""The one walk of a host function's IR that pypto's parse-time checks and the passes share.

Contract: `function_index(func)` is the FunctionIndex of `func`:
- `bound`: the names the function binds: its parameters, assignment targets (`C[i] = v`
  binds C), loop indices and carried values, `with ... as` variables, nested bodies included;
- `names`: those and every Var in the expressions of its body and of its signature
  (annotations, defaults, return type, decorator arguments);
- `calls`: every OpCall and FuncCall in the expressions of its body, in visit order
  (statements pre-order, a compound statement before its bodies; within a statement its
  expressions in source order, each pre-order), each with whether it sits in a device
  scope: the body of `with pl.incore()`, `with pl.spmd(...)`, `with pl.at(level=
  pl.Level.CORE_GROUP, ...)` or of a loop over pl.spmd / pl.split_aiv (pypto's parser
  refuses HOST-only ops there).
The index is computed on first use and kept on the function (`Function.index`, never part
of equality): IR nodes are immutable and a pass that changes a function builds a new one,
which starts without an index, so the index always describes its own function. The parser's
checks compute it for every parsed function; the passes then read it without walking again.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.host import ir

DEVICE_SCOPES = frozenset({"pl.incore", "pl.spmd"})
DEVICE_LOOPS = frozenset({"pl.spmd", "pl.split_aiv"})

Call = ir.OpCall | ir.FuncCall


@dataclass(frozen=True, slots=True)
class FunctionIndex:
    bound: frozenset[str]
    names: frozenset[str]
    calls: tuple[tuple[Call, bool], ...]


def function_index(func: ir.Function) -> FunctionIndex:
    index = func.index
    if index is None:
        index = _Walk(func).index()
        object.__setattr__(func, "index", index)   # a cache on an immutable node, as above
    assert isinstance(index, FunctionIndex)
    return index


def is_device_scope(context: ir.Expr) -> bool:
    if not isinstance(context, ir.OpCall):
        return False
    if context.op == "pl.at":
        level = context.kwarg("level")
        return isinstance(level, ir.Symbol) and level.path == "pl.Level.CORE_GROUP"
    return context.op in DEVICE_SCOPES


def _opens_device_scope(stmt: ir.Stmt) -> bool:
    if isinstance(stmt, ir.With):
        return is_device_scope(stmt.context)
    return isinstance(stmt, ir.For) and isinstance(stmt.iterable, ir.OpCall) and stmt.iterable.op in DEVICE_LOOPS


class _Walk:
    def __init__(self, func: ir.Function) -> None:
        self.func = func
        self.bound = {p.name for p in func.params}
        self.names: set[str] = set()
        self.calls: list[tuple[Call, bool]] = []

    def index(self) -> FunctionIndex:
        func = self.func
        signature = [e for p in func.params for e in (p.annotation, p.default) if e is not None]
        signature += [func.returns] if func.returns is not None else []
        signature += [value for _, value in func.decorator or ()]
        for expr in signature:
            self.expr(expr, None)
        self.body(func.body, False)
        return FunctionIndex(frozenset(self.bound), frozenset(self.names | self.bound), tuple(self.calls))

    def body(self, body: tuple[ir.Stmt, ...], in_device: bool) -> None:
        names = self.bound
        for stmt in body:
            if isinstance(stmt, ir.Assign):
                names.update(v.name for v in ir.target_vars(stmt.target))
            elif isinstance(stmt, ir.For):
                if stmt.index is not None:
                    names.add(stmt.index.name)
                names.update(v.name for v in stmt.iter_args or ())
            elif isinstance(stmt, ir.With) and stmt.var is not None:
                names.add(stmt.var.name)
            for expr in ir.stmt_exprs(stmt):
                self.expr(expr, in_device)
            nested = ir.child_bodies(stmt)
            if nested:
                inner = in_device or _opens_device_scope(stmt)
                for inner_body in nested:
                    self.body(inner_body, inner)

    def expr(self, top: ir.Expr, in_device: bool | None) -> None:
        """Names of `top`; its calls too, unless `in_device` is None (a signature)."""
        names, calls, table = self.names, self.calls, ir.SUB_EXPRS
        stack = [top]
        while stack:
            node = stack.pop()
            kind = type(node)
            if isinstance(node, ir.Var):
                names.add(node.name)
                continue
            if in_device is not None and isinstance(node, (ir.OpCall, ir.FuncCall)):
                calls.append((node, in_device))
            if (children := table.get(kind)) is not None:
                stack.extend(reversed(children(node)))
