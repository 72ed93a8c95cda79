"""The module-level values a host program's functions read at run time.

Contract: `module_constants(module)` evaluates, in source order, every top-level
assignment outside the programs whose value is a constant expression: int / float / str /
bool literals, names bound earlier this way, unary minus / plus and the arithmetic
operators, tuples of these; `pl.dynamic("N")` is a DynamicDim (signatures.py). Targets are a name (`N = 64`, `N: int = 64`) or a tuple of
names unpacking a tuple of the same length (`ROWS, COLS = 4, 16`); an augmented
assignment (`N += 1`) updates a known name. A statement it cannot evaluate leaves its
names out (a later use is then "used before it is defined", as the interpreter says).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from tilecc.host import ir
from tilecc.host.runtime.signatures import DynamicDim

BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.Div: operator.truediv, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}
UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos,
                                                        ast.Invert: operator.invert}
MAX_EXPONENT = 4096   # a hostile `2 ** 10 ** 9` is not evaluated


class _NotConstant(Exception):
    pass


def _evaluate(node: ast.expr, constants: dict[str, Any]) -> Any:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dynamic"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "pl" and len(node.args) == 1
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return DynamicDim(node.args[0].value)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
        return node.value
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e, constants) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and (unary := UNARY.get(type(node.op))) is not None:
        return unary(_evaluate(node.operand, constants))
    if isinstance(node, ast.BinOp) and (binary := BINARY.get(type(node.op))) is not None:
        left, right = _evaluate(node.left, constants), _evaluate(node.right, constants)
        if isinstance(node.op, (ast.Pow, ast.LShift)) and isinstance(right, int) and right > MAX_EXPONENT:
            raise _NotConstant()
        return binary(left, right)
    raise _NotConstant()


def _bind(target: ast.expr, value: Any, constants: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        constants[target.id] = value
        return
    if not (isinstance(target, ast.Tuple) and isinstance(value, tuple) and len(value) == len(target.elts)
            and all(isinstance(e, ast.Name) for e in target.elts)):
        raise _NotConstant()
    for elt, item in zip(target.elts, value):
        _bind(elt, item, constants)


def module_constants(module: ir.Module) -> dict[str, Any]:
    constants: dict[str, Any] = {}
    for item in module.items:
        if not isinstance(item, ir.Verbatim):
            continue
        for stmt in ast.parse(item.source).body:
            try:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    _bind(stmt.targets[0], _evaluate(stmt.value, constants), constants)
                elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                    _bind(stmt.target, _evaluate(stmt.value, constants), constants)
                elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                    binop = ast.BinOp(ast.Name(stmt.target.id, ast.Load()), stmt.op, stmt.value)
                    constants[stmt.target.id] = _evaluate(binop, constants)
            except (_NotConstant, ArithmeticError, TypeError, ValueError):
                for name in ast.walk(stmt):
                    if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                        constants.pop(name.id, None)
    return constants
