"""Expressions of host programs as one rank evaluates them.

Contract: `ExprEvaluator.eval(expr, env)` is the value of a host IR expression on the rank
`self.rank` of `self.world`, names read from `env` (the function's variables) and then from
`self.constants` (module constants, pl.dynamic dimensions bound by the call). Python's own
operators (BINARY / COMPARE / UNARY, with its short-circuiting `and` / `or` and chained
comparisons), tuples, lists, list comprehensions, `range(...)`, subscripts and slices of
the rank's own view of a window, `.shape`, and `pl.<dtype>` / `pld.ReduceOp.X` symbols;
op calls and calls of program functions go to the subclass's `op` and `dispatch`
(interpreter.py). An index a value does not have is an InterpError at the subscript's
line and column (`located`); any other expression is an InterpError naming it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from tilecc.errors import InterpError
from tilecc.host import ir
from tilecc.host.runtime.backend import Backend
from tilecc.host.runtime.dtypes import DTYPES
from tilecc.host.runtime.signatures import dynamic_value
from tilecc.host.runtime.world import Window

BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b, "**": lambda a, b: a ** b,
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b, "&": lambda a, b: a & b,
    "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "@": lambda a, b: a @ b}
COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "is": lambda a, b: a is b, "is not": lambda a, b: a is not b,
    "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}
UNARY: dict[str, Callable[[Any], Any]] = {"-": lambda v: -v, "+": lambda v: +v, "~": lambda v: ~v,
                                          "not": lambda v: not v}

# What Python and numpy raise for a value a rank cannot index or compute with; a located
# InterpError replaces them (the program line, not a traceback frame, is the place).
VALUE_ERRORS = (IndexError, KeyError, TypeError, ValueError, ArithmeticError)


def local_value(value: Any, world: Backend, rank: int) -> Any:
    """A window as the rank's own numpy view; any other value as it is."""
    return value.local(world, rank) if isinstance(value, Window) else value


class ExprEvaluator(ABC):
    world: Backend
    rank: int
    constants: dict[str, Any]

    @abstractmethod
    def located(self, node: ir.Subscript | ir.FuncCall | ir.OpCall, message: str) -> InterpError: ...

    @abstractmethod
    def op(self, call: ir.OpCall, env: dict[str, Any]) -> Any: ...

    @abstractmethod
    def dispatch(self, call: ir.FuncCall, env: dict[str, Any]) -> Any: ...

    def eval(self, expr: ir.Expr, env: dict[str, Any]) -> Any:
        if isinstance(expr, ir.Var):
            if expr.name in env:
                return env[expr.name]
            if expr.name in self.constants:
                return dynamic_value(self.constants[expr.name], expr.name)
            raise InterpError(f"rank {self.rank}: variable `{expr.name}` is used before it is defined")
        if isinstance(expr, ir.Const):
            return expr.value
        if isinstance(expr, ir.Symbol):
            return self.symbol(expr.path)
        if isinstance(expr, ir.OpCall):
            return self.op(expr, env)
        if isinstance(expr, ir.FuncCall):
            return self.dispatch(expr, env)
        if isinstance(expr, ir.BinOp):
            return BINARY[expr.op](self.eval(expr.left, env), self.eval(expr.right, env))
        if isinstance(expr, ir.UnaryOp):
            return UNARY[expr.op](self.eval(expr.operand, env))
        if isinstance(expr, ir.Compare):
            left = self.eval(expr.left, env)
            for op, comparator in zip(expr.ops, expr.comparators):
                right = self.eval(comparator, env)
                if not COMPARE[op](left, right):
                    return False
                left = right
            return True
        if isinstance(expr, ir.BoolOp):
            result: Any = expr.op == "and"
            for value in expr.values:
                result = self.eval(value, env)
                if (expr.op == "and") != bool(result):
                    return result
            return result
        if isinstance(expr, ir.IfExp):
            return self.eval(expr.then if self.eval(expr.cond, env) else expr.orelse, env)
        if isinstance(expr, ir.TupleExpr):
            return tuple(self.eval(e, env) for e in expr.items)
        if isinstance(expr, ir.ListExpr):
            return [self.eval(e, env) for e in expr.items]
        if isinstance(expr, ir.ListComp):
            items = []
            for item in self.eval(expr.iterable, env):
                inner = {**env, expr.target.name: item}
                if all(self.eval(c, inner) for c in expr.conditions):
                    items.append(self.eval(expr.elt, inner))
            return items
        if isinstance(expr, ir.Call) and expr.func == ir.Var("range") and not expr.kwargs:
            return range(*(int(self.eval(a, env)) for a in expr.args))
        if isinstance(expr, ir.Subscript):
            value = local_value(self.eval(expr.value, env), self.world, self.rank)
            index = self.eval(expr.index, env)
            try:
                return value[index]
            except VALUE_ERRORS as err:
                raise self.located(expr, indexed_message(expr, index, value, err)) from None
        if isinstance(expr, ir.Slice):
            return slice(*(self.eval(e, env) if e is not None else None for e in (expr.lower, expr.upper, expr.step)))
        if isinstance(expr, ir.Attr) and expr.attr == "shape":
            value = self.eval(expr.value, env)
            return tuple(value.shape)
        raise InterpError(f"rank {self.rank}: cannot execute expression {expr!r}")

    def symbol(self, path: str) -> Any:
        head, _, last = path.rpartition(".")
        if head == "pl" and last in DTYPES:
            return np.dtype(DTYPES[last])
        if head == "pld.ReduceOp":
            return last
        return path


def indexed_message(node: ir.Subscript, index: Any, value: Any, err: Exception) -> str:
    """`name[index]`: Python's reason (what was indexed), for a message."""
    name = node.value.name if isinstance(node.value, ir.Var) else "value"
    shape = getattr(value, "shape", None)
    what = f"{getattr(value, 'dtype', '')}{list(shape)}" if shape is not None else type(value).__name__
    return f"`{name}[{index!r}]`: {str(err).strip(chr(39))} ({name} is {what})"
