"""Compile-time integer constants of a host module, as pypto's parser folds them.

Contract: a module constant is a name bound exactly once at module level, by
`NAME = <int expr>` or `NAME: T = <int expr>`, where <int expr> is an int literal or an
arithmetic expression over int literals and earlier such names (pypto's parser evaluates
a name that is not a DSL variable in the function's globals, so `core_num=CORES` reaches
the pass as an int). `program_constants(module)` gives the constants each program of
`module.programs` can see (see its docstring for order and builder shadowing). `fold_int(expr, constants, local)` folds an IR expression the same
way and gives None for anything that is not a compile-time int; names in `local` (the
function's own variables) are never constants. bool is not an int here (pypto rejects
`core_num=True`).
"""

from __future__ import annotations

import ast
import operator
from collections import Counter
from collections.abc import Callable, Mapping

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


def _verbatim_tree(item: ir.Verbatim) -> ast.Module | None:
    try:
        return ast.parse(item.source)
    except SyntaxError:   # kept text is valid Python by construction; be safe anyway
        return None


def program_constants(module: ir.Module) -> list[dict[str, int]]:
    """The constants visible in each program of `module.programs`: a top-level program sees
    those bound before it (pypto folds at decoration time); a program nested in a builder
    function sees all of them (the builder runs after the module is loaded) except the
    names the builder binds itself (its parameters and locals shadow the globals)."""
    trees = {id(item): _verbatim_tree(item) for item in module.items if isinstance(item, ir.Verbatim)}
    bindings: Counter[str] = Counter(item.name for item in module.items
                                     if isinstance(item, (ir.Program, ir.Function)))
    for tree in trees.values():
        for stmt in tree.body if tree else ():
            bindings.update([stmt.name] if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                            else _bound_names(stmt, nested=False))
    constants: dict[str, int] = {}
    seen: list[tuple[ir.Program, dict[str, int]]] = []   # top-level programs with a snapshot
    for item in module.items:
        if isinstance(item, ir.Program):
            seen.append((item, dict(constants)))
        tree = trees.get(id(item))
        for stmt in tree.body if tree else ():
            target, value = None, None
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                target, value = stmt.target, stmt.value
            if isinstance(target, ast.Name) and value is not None and bindings[target.id] == 1:
                folded = _fold_ast(value, constants)
                if folded is not None:
                    constants[target.id] = folded
    out: list[dict[str, int]] = []
    snapshots = iter(seen)
    for item in module.items:
        if isinstance(item, ir.Program):
            out.append(next(snapshots)[1])
        elif isinstance(item, ir.Verbatim) and item.programs:
            tree = trees[id(item)]
            shadowed = set(_bound_names(tree)) if tree else set(constants)
            out.extend({k: v for k, v in constants.items() if k not in shadowed} for _ in item.programs)
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
