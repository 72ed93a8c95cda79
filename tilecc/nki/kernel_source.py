"""Compiling a kernel file for the command line: its own Python, with `**` bounded.

Contract: `KernelLoader(name, path)` is an importlib source loader for a kernel file
(tilecc/nki/loader.py) that compiles the file itself, every time, from its source:
- every `a ** b` (and `x **= b` on a plain name) becomes `guarded_pow(a, b)`, which is
  `a ** b` except that a Python int raised to a Python int whose result would have more
  bits than tilecc.limits' "int-bits" bound is a KernelError at the kernel line, before
  CPython starts the computation. CPython computes such a power in one C call that neither
  Ctrl-C nor any bound of tilecc can stop (`10**120**120**12` runs for hours), and it is
  the only operator whose cost is exponential in its operands' size: everything else a
  kernel does in Python is bytecode (bounded by the trace steps of tilecc/nki/tracer.py)
  or fails fast with MemoryError.
- Python's compile-time warnings (a SyntaxWarning "perhaps you missed a comma?") are not
  shown: CPython shows them only when it compiles a file without a cached .pyc, and a
  kernel that then fails would print them above its one-line error.
- nothing is cached: no `__pycache__` folder is written next to the user's kernel.
"""

from __future__ import annotations

import ast
import importlib.machinery
import math
import warnings
from types import CodeType, ModuleType
from typing import Any

from tilecc.errors import TileccError
from tilecc.limits import LIMITS, limit
from tilecc.nki.errors import kernel_error

GUARD = "__tilecc_pow__"   # its name in the kernel module's globals


def guarded_pow(base: Any, exponent: Any) -> Any:
    """`base ** exponent`, refused when two Python ints would make an integer of more bits
    than the "int-bits" bound (a negative exponent makes a float: never refused)."""
    if type(base) in (int, bool) and type(exponent) in (int, bool) and exponent > 1 \
            and abs(base) > 1:
        # at least `exponent` bits; an exponent too big for a float is beyond any bound
        bits = exponent * math.log2(abs(base)) if exponent.bit_length() < 1000 else math.inf
        if bits > limit("int-bits"):
            entry = LIMITS["int-bits"]
            raise kernel_error(f"this ** makes an integer of about {bits:.3g} bits, more than "
                               f"the limit of {limit('int-bits')} {entry.what}; "
                               f"{entry.how_to_raise()}")
    return base ** exponent


def _guarded(node: ast.AST) -> ast.AST:
    """`node`, or the guarded call that replaces it (its operands stay below it)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return ast.copy_location(ast.Call(ast.Name(GUARD, ast.Load()), [node.left, node.right],
                                          []), node)
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Pow) and \
            isinstance(node.target, ast.Name):
        value = ast.Call(ast.Name(GUARD, ast.Load()),
                         [ast.Name(node.target.id, ast.Load()), node.value], [])
        return ast.copy_location(ast.Assign([node.target], ast.copy_location(value, node)), node)
    return node


def _guard_powers(tree: ast.Module) -> ast.Module:
    """Every power of `tree` guarded, walked with a stack: a kernel nested deeper than
    Python's recursion limit allows a recursive visitor is still one CPython compiles."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        value[i] = _guarded(item)
                        stack.append(value[i])
            elif isinstance(value, ast.AST):
                setattr(node, name, new := _guarded(value))
                stack.append(new)
    return tree


def compile_kernel(source: bytes, path: str) -> CodeType:
    """The code of a kernel file's source with every `**` guarded (SyntaxError as compile
    raises it; a TileccError naming the file when it is nested too deeply for CPython)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = _guard_powers(ast.parse(source, filename=path))
            return compile(ast.fix_missing_locations(tree), path, "exec", dont_inherit=True)
    except RecursionError:
        raise TileccError(f"{path}: nested too deeply for Python to compile "
                          f"(RecursionError)") from None


class KernelLoader(importlib.machinery.SourceFileLoader):
    """A source loader compiling with `compile_kernel`, never from or into a .pyc."""

    def get_code(self, fullname: str) -> CodeType:
        return compile_kernel(self.get_data(self.path), self.path)

    def exec_module(self, module: ModuleType) -> None:
        module.__dict__[GUARD] = guarded_pow
        super().exec_module(module)
