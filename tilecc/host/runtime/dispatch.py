"""What a dispatch `x = self.chip(..., device=r)` gives back to the host program.

Contract: pypto's host program runs once and dispatches each call to one device; the
runtime runs it on every rank (SPMD) and executes a dispatch only on the rank named by
`device=`. The value the host gets is the same on every rank: a chip function returns
the windows and host tensors it was given (`return pl.store(t, [0, 0], win)` is `win`),
so `returned_arguments(program, func)` finds, without running anything, which argument
each returned value is, and `dispatch_result` builds the host's value from the call's
own arguments. A returned value that is not one of the arguments (a fresh tensor) exists
on the executing rank only: there it is the function's actual result, elsewhere it is
`NotOnThisRank`, which every op refuses with a message naming the call.

`returned_arguments` follows, in source order, assignments of a name to a parameter, to
another such name, to an op that returns one of its arguments (`pl.store` returns its
destination) or to a call of another program function; a name assigned different such
values on different paths, or any return it cannot follow, makes that value unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tilecc.host import ir
from tilecc.host.ops import RETURNS_ARGUMENT

MAX_DEPTH = 16   # calls between program functions followed before giving up (recursion)


@dataclass(frozen=True, slots=True)
class NotOnThisRank:
    """A dispatch result that lives on another device."""
    call: str
    device: int

    def __repr__(self) -> str:
        return f"the result of `self.{self.call}(...)` on device {self.device} (not a window or host tensor)"


def returned_arguments(program: ir.Program, func: ir.Function, depth: int = 0) -> tuple[int | None, ...] | None:
    """For each value `func` returns, the index of the parameter it is (None if it is not
    one); None if the function's returns disagree in number or it returns nothing."""
    env: dict[str, int | None] = {p.name: i for i, p in enumerate(func.params)}
    result: tuple[int | None, ...] | None = None
    for stmt in ir.walk_stmts(func.body):
        if isinstance(stmt, ir.Assign) and isinstance(stmt.target, ir.Subscript):
            continue   # `row[i] = v` writes into row: the name still holds the same value
        if isinstance(stmt, ir.Assign):
            new = _source(program, stmt.value, env, depth) if isinstance(stmt.target, ir.Var) else None
            for var in ir.target_vars(stmt.target):
                # walk_stmts flattens branches: a name bound to two sources is unknown
                env[var.name] = new if env.get(var.name, new) == new else None
        elif isinstance(stmt, ir.For):
            for var in ((stmt.index,) if stmt.index else ()) + (stmt.iter_args or ()):
                env[var.name] = None
        elif isinstance(stmt, ir.Return):
            values = tuple(_source(program, v, env, depth) for v in stmt.values)
            if result is not None and result != values:
                return None
            result = values
    return result if result else None


def _source(program: ir.Program, expr: ir.Expr, env: dict[str, int | None], depth: int) -> int | None:
    if isinstance(expr, ir.Var):
        return env.get(expr.name)
    if isinstance(expr, ir.OpCall) and (index := RETURNS_ARGUMENT.get(expr.op)) is not None:
        return _source(program, expr.args[index], env, depth) if index < len(expr.args) else None
    if isinstance(expr, ir.FuncCall) and depth < MAX_DEPTH:
        try:
            callee = program.function(expr.func)
        except KeyError:
            return None
        inner = returned_arguments(program, callee, depth + 1)
        if inner is not None and len(inner) == 1 and inner[0] is not None and inner[0] < len(expr.args):
            return _source(program, expr.args[inner[0]], env, depth)
    return None


def dispatch_result(returned: tuple[int | None, ...] | None, args: Sequence[Any], actual: Any,
                    executed: bool, call: str, device: int) -> Any:
    """The host's value of a dispatch: its arguments where the function returns them, its
    actual result where it ran (`executed`), NotOnThisRank elsewhere."""
    if returned is None:
        return actual if executed else NotOnThisRank(call, device)
    actual_values = actual if len(returned) > 1 and isinstance(actual, tuple) else (actual,)
    values = [args[i] if i is not None else (actual_values[k] if executed and k < len(actual_values)
                                             else NotOnThisRank(call, device))
              for k, i in enumerate(returned)]
    return values[0] if len(values) == 1 else tuple(values)
