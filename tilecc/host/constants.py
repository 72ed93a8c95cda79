"""Compile-time integer constants of a host module, as pypto's parser folds them.

Contract: a module constant is a name bound exactly once at module level, by
`NAME = <int expr>`, `NAME: T = <int expr>` or `A, B = <int expr>, <int expr>`, where <int expr> is an int literal or an
arithmetic expression over int literals and earlier such names (pypto's parser evaluates
a name that is not a DSL variable in the function's globals, so `core_num=CORES` reaches
the pass as an int). `program_scopes(module)` gives the constants and bound names each
program of `module.programs` can see (see its docstring for order and builder shadowing);
`decoration_time_int` tells an int expression over such names that tilecc cannot fold
(a builder's parameter, an imported name) from one over the function's own variables.
`fold_int(expr, constants, local)` folds an IR expression the same way and gives None
for anything that is not a compile-time int; names in `local` (the function's own
variables) are never constants. bool is not an int here (pypto rejects `core_num=True`).
"""

from __future__ import annotations

import ast
import operator
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tilecc.host import ir

# the int operators pypto's expression evaluator folds; `/` gives a float and is left out
BINARY: dict[str, Callable[[int, int], int]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
    "%": operator.mod, "**": operator.pow, "<<": operator.lshift, ">>": operator.rshift,
    "&": operator.and_, "|": operator.or_, "^": operator.xor}
UNARY: dict[str, Callable[[int], int]] = {"-": operator.neg, "+": operator.pos, "~": operator.invert}
AST_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
              ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
AST_UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
MAX_SHIFT_OR_POWER = 4096   # keeps a hostile `2 ** 10 ** 9` from hanging the fold


def _apply(op: str, left: int, right: int) -> int | None:
    if op in ("//", "%") and right == 0:
        return None
    if op in ("**", "<<", ">>") and not 0 <= right <= MAX_SHIFT_OR_POWER:
        return None
    return BINARY[op](left, right)


def _fold_ast(node: ast.expr, env: Mapping[str, int]) -> int | None:
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.BinOp) and type(node.op) in AST_BINARY:
        left, right = _fold_ast(node.left, env), _fold_ast(node.right, env)
        return None if left is None or right is None else _apply(AST_BINARY[type(node.op)], left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in AST_UNARY:
        value = _fold_ast(node.operand, env)
        return None if value is None else UNARY[AST_UNARY[type(node.op)]](value)
    return None


def _bound_names(tree: ast.AST, *, nested: bool = True) -> list[str]:
    """Every name `tree` binds (assignments, imports, defs, loops, parameters), once per
    binding; with nested=False the bodies of defs, classes and lambdas are not entered
    (their names are not bound at the statement's own level)."""
    names: list[str] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.alias):
            names.append((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            names.append(node.arg)
        if nested or node is tree or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                           ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return names


def _assigned_pairs(stmt: ast.stmt) -> list[tuple[str, ast.expr]]:
    """(name, value) of `NAME = v`, `NAME: T = v` and `A, B = a, b` (equal lengths)."""
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return [(stmt.target.id, stmt.value)]
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return []
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts)
            and all(isinstance(e, ast.Name) for e in target.elts)):
        return [(e.id, v) for e, v in zip(target.elts, value.elts) if isinstance(e, ast.Name)]
    return []


def _verbatim_tree(item: ir.Verbatim) -> ast.Module | None:
    try:
        return ast.parse(item.source)
    except SyntaxError:   # kept text is valid Python by construction; be safe anyway
        return None


@dataclass(frozen=True)
class Scope:
    """What a program's functions can read at decoration time besides their own variables:
    `constants`, the int constants tilecc folds, and `names`, every name bound where the
    program is defined (module bindings, and a builder's parameters and locals), whose
    values pypto's parser reads when it decorates the class."""
    constants: Mapping[str, int] = field(default_factory=dict)
    names: frozenset[str] = frozenset()


def program_scopes(module: ir.Module) -> list[Scope]:
    """The scope of each program of `module.programs`: a top-level program sees the
    constants and names bound before it (pypto folds at decoration time); a program nested
    in a builder function sees all of them (the builder runs after the module is loaded),
    its builder's parameters and locals shadowing the module's constants."""
    trees = {id(item): _verbatim_tree(item) for item in module.items if isinstance(item, ir.Verbatim)}
    bindings: Counter[str] = Counter(item.name for item in module.items
                                     if isinstance(item, (ir.Program, ir.Function)))
    for tree in trees.values():
        for stmt in tree.body if tree else ():
            bindings.update([stmt.name] if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                            else _bound_names(stmt, nested=False))
    constants: dict[str, int] = {}
    names: set[str] = set()
    seen: list[Scope] = []   # top-level programs: a snapshot when they are reached
    for item in module.items:
        if isinstance(item, ir.Program):
            seen.append(Scope(dict(constants), frozenset(names)))
        if isinstance(item, (ir.Program, ir.Function)):
            names.add(item.name)
        tree = trees.get(id(item))
        for stmt in tree.body if tree else ():
            names.update([stmt.name] if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                         else _bound_names(stmt, nested=False))
            for target, value in _assigned_pairs(stmt):
                if bindings[target] == 1 and (folded := _fold_ast(value, constants)) is not None:
                    constants[target] = folded
    out: list[Scope] = []
    snapshots = iter(seen)
    for item in module.items:
        if isinstance(item, ir.Program):
            out.append(next(snapshots))
        elif isinstance(item, ir.Verbatim) and item.programs:
            tree = trees[id(item)]
            local = set(_bound_names(tree)) if tree else set(constants)
            scope = Scope({k: v for k, v in constants.items() if k not in local}, frozenset(names | local))
            out.extend(scope for _ in item.programs)
    return out


def fold_int(expr: ir.Expr, constants: Mapping[str, int], local: set[str]) -> int | None:
    if isinstance(expr, ir.Const):
        return expr.value if type(expr.value) is int else None
    if isinstance(expr, ir.Var):
        return constants.get(expr.name) if expr.name not in local else None
    if isinstance(expr, ir.BinOp) and expr.op in BINARY:
        left, right = fold_int(expr.left, constants, local), fold_int(expr.right, constants, local)
        return None if left is None or right is None else _apply(expr.op, left, right)
    if isinstance(expr, ir.UnaryOp) and expr.op in UNARY:
        value = fold_int(expr.operand, constants, local)
        return None if value is None else UNARY[expr.op](value)
    return None


def decoration_time_int(expr: ir.Expr, names: frozenset[str], local: set[str]) -> bool:
    """True for an int expression over names of the program's scope (`core_num=cores` with
    `cores` a builder parameter): pypto reads it as a Python int when it decorates the
    class, so it is a compile-time int whose value tilecc does not know. A function's own
    variables are DSL values, never such names."""
    has_name = False
    for node in ir.walk_expr(expr):
        if isinstance(node, ir.Var):
            if node.name in local or node.name not in names:
                return False
            has_name = True
        elif isinstance(node, ir.Const):
            if type(node.value) is not int:
                return False
        elif isinstance(node, ir.Attr):
            if not isinstance(node.value, (ir.Var, ir.Attr)):
                return False
        elif not ((isinstance(node, ir.BinOp) and node.op in BINARY)
                  or (isinstance(node, ir.UnaryOp) and node.op in UNARY)):
            return False
    return has_name
