"""IR of the host orchestration DSL (pypto's `pl` / `pld` surface syntax).

Invariants:
- Nodes are immutable (frozen dataclasses, tuples for sequences); passes rebuild what they
  change and share everything else, so "unchanged" can be tested by identity.
- Variables are names (`Var("data")`): structural equality (`==`) compares names and
  the role of every node (an assignment target, a loop index, a parameter, an op call
  versus a call of a program function), never object identity.
- Op calls carry their full name after the parser resolved short forms
  (`pld.window` -> `pld.tensor.window`); kwargs keep their source order.
- `pld.tensor.alloc_window_buffer` carries the internal `name` kwarg equal to the name
  of the variable it is assigned to (the parser adds it, the printer omits it).
- The one cache on a node: `Function.index`, what a walk of that function finds, set on
  first use and never part of equality.
- Source positions (`line`, `col`, 1-based) ride along on op calls for error messages
  and never take part in equality.
- A Module is a source file: @pl.program classes (Program), module-level `@pl.function`
  definitions (Function, no `self`) and other top-level statements kept as verbatim
  source (imports, constants, helpers, tests). A verbatim statement may hold programs of
  its own (pypto's builder functions `def build(n): @pl.program class P: ...; return P`):
  its source then keeps each such class as a placeholder and `programs` holds them in
  source order, so passes see every program of the file.
- Comments are kept: Comment statements in bodies, `comments` of functions and programs,
  and verbatim source text (see tilecc/host/comments.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any, Union

# the literal kinds of the DSL (the parser rejects bytes and complex constants)
ConstValue = Union[int, float, bool, str, EllipsisType, None]

# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Var:
    name: str


@dataclass(frozen=True, slots=True)
class Const:
    """int / float / bool / str / None / Ellipsis (`...`) literal."""
    value: ConstValue

    def __eq__(self, other: object) -> bool:
        # True == 1 in Python; a bool constant must not equal an int constant.
        return (isinstance(other, Const) and type(self.value) is type(other.value)
                and self.value == other.value)

    def __hash__(self) -> int:
        return hash((type(self.value), self.value))


@dataclass(frozen=True, slots=True)
class Symbol:
    """A dotted constant rooted at `pl` or `pld`: `pl.FP32`, `pld.ReduceOp.Sum`, `pl.Level.HOST`."""
    path: str


@dataclass(frozen=True, slots=True)
class Attr:
    """Attribute of a non-module value, e.g. `x.shape`."""
    value: Expr
    attr: str


@dataclass(frozen=True, slots=True)
class OpCall:
    """Call of a `pl` / `pld` op by its full dotted name."""
    op: str
    args: tuple[Expr, ...] = ()
    kwargs: tuple[tuple[str, Expr], ...] = ()
    line: int = field(default=0, compare=False, repr=False)
    col: int = field(default=0, compare=False, repr=False)

    def kwarg(self, name: str) -> Expr | None:
        for key, value in self.kwargs:
            if key == name:
                return value
        return None


@dataclass(frozen=True, slots=True)
class FuncCall:
    """Call of another function of the program: `self.chip_orch(data, device=r)`."""
    func: str
    args: tuple[Expr, ...] = ()
    kwargs: tuple[tuple[str, Expr], ...] = ()
    line: int = field(default=0, compare=False, repr=False)
    col: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Call:
    """Any other call (a method of a value, a plain name)."""
    func: Expr
    args: tuple[Expr, ...] = ()
    kwargs: tuple[tuple[str, Expr], ...] = ()


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str          # Python operator token: + - * / // % ** << >> & | ^ @
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class UnaryOp:
    op: str          # - + ~ not
    operand: Expr


@dataclass(frozen=True, slots=True)
class Compare:
    left: Expr
    ops: tuple[str, ...]          # == != < <= > >= is is-not in not-in
    comparators: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class BoolOp:
    op: str          # and / or
    values: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class IfExp:
    cond: Expr
    then: Expr
    orelse: Expr


@dataclass(frozen=True, slots=True)
class TupleExpr:
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class ListExpr:
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class DictExpr:
    """`{k: v, ...}`, e.g. the argument of pypto's `pl.func_attr({...})` prologue."""
    keys: tuple[Expr, ...]
    values: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Formatted:
    """A `{value!conversion:spec}` field of an f-string (conversion -1 when absent)."""
    value: Expr
    conversion: int = -1
    spec: Expr | None = None


@dataclass(frozen=True, slots=True)
class FString:
    """An f-string: string constants and Formatted fields."""
    parts: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class YieldExpr:
    """A Python `yield [value]`, only as an expression statement (pypto's IR syntax)."""
    value: Expr | None


@dataclass(frozen=True, slots=True)
class ListComp:
    """`[elt for target in iterable if c1 if c2]` as a call argument (pypto's
    `deps=[t[i] for i in range(n)]`): one `for` clause over one name, as pypto accepts."""
    elt: Expr
    target: Var
    iterable: Expr
    conditions: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True)
class Subscript:
    """`value[index]`; the position (1-based) locates an index a rank cannot apply."""
    value: Expr
    index: Expr
    line: int = field(default=0, compare=False, repr=False)
    col: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Slice:
    lower: Expr | None
    upper: Expr | None
    step: Expr | None


Expr = Union[Var, Const, Symbol, Attr, OpCall, FuncCall, Call, BinOp, UnaryOp, Compare,
             BoolOp, IfExp, TupleExpr, ListExpr, DictExpr, Formatted, FString, YieldExpr, ListComp, Subscript,
             Slice]

# ---------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Assign:
    """`target = value` or `target: annotation = value`; target is a Var, a TupleExpr of
    Vars or `name[index]` (a Subscript of a Var: pypto's write into a tensor window)."""
    target: Var | TupleExpr | Subscript
    value: Expr
    annotation: Expr | None = None


@dataclass(frozen=True, slots=True)
class ExprStmt:
    expr: Expr


@dataclass(frozen=True, slots=True)
class Return:
    """`return`, `return v` or `return a, b` (several values, as pypto's ReturnStmt)."""
    values: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True)
class For:
    """`for index in pl.range(...)` (pl.parallel, ... alike) or, with loop-carried values,
    `for index, (a, b) in pl.range(..., init_values=(x, y))`; pypto's SSA while loop
    `for (a, b) in pl.while_(init_values=(x, y))` has no index (None)."""
    index: Var | None
    iter_args: tuple[Var, ...] | None
    iterable: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class While:
    cond: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class If:
    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@dataclass(frozen=True, slots=True)
class With:
    context: Expr
    var: Var | None
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Pass:
    pass


@dataclass(frozen=True, slots=True)
class Comment:
    """A source comment (`# ...`, text with its `#`) placed before the statement it
    annotated; passes carry it along like any statement without effect."""
    text: str


@dataclass(frozen=True, slots=True)
class Break:
    pass


@dataclass(frozen=True, slots=True)
class Continue:
    pass


Stmt = Union[Assign, ExprStmt, Return, For, While, If, With, Pass, Break, Continue, Comment]

# ---------------------------------------------------------------- functions and programs


# pypto's Level aliases (src/ir StringToLevel): alias -> the level it names
LEVEL_ALIASES = {"L2CACHE": "CHIP_DIE", "PROCESSOR": "CHIP", "UMA": "CHIP", "NODE": "HOST",
                 "POD": "CLUSTER_0", "CLOS1": "CLUSTER_1", "CLOS2": "CLUSTER_2"}


@dataclass(frozen=True, slots=True)
class Param:
    """A parameter; `kw_only` for those after `*`; `default` is its default value."""
    name: str
    annotation: Expr | None = None
    default: Expr | None = None
    kw_only: bool = False


@dataclass(frozen=True, slots=True)
class Function:
    """A `@pl.function(...)` method. `decorator` holds the decorator's kwargs in source
    order (None for a bare `@pl.function`); level / role / function type derive from them.
    `has_self` is False for functions without `self` (module-level functions, pypto's
    self-contained SubWorkers); `params` never include `self`. `decorator_name` is the
    `pl.` decorator (`function`, or `inline` for pypto's inlined helpers). `source_lines`
    is a source position and never takes part in equality."""
    name: str
    params: tuple[Param, ...]
    returns: Expr | None
    body: tuple[Stmt, ...]
    decorator: tuple[tuple[str, Expr], ...] | None = ()
    doc: str | None = None
    has_self: bool = True
    decorator_name: str = "function"
    comments: tuple[str, ...] = ()   # before the definition (and on its header lines)
    # (first, body, last) source lines of a parsed definition: its first line (leading
    # comments and decorators included), the first line of its body (0 if the body does not
    # start on a line of its own) and its last line; where a printer that keeps the rest of
    # the file puts a rewritten function or body back
    source_lines: tuple[int, int, int] | None = field(default=None, compare=False, repr=False)
    # id of a statement list of `body` (nested ones too) -> the (first, last) source lines of
    # each of its statements (see parse_stmt.statement_chunks); the lists are this object's own
    body_chunks: Mapping[int, tuple[tuple[int, int], ...]] | None = field(default=None, compare=False, repr=False)
    # the names and calls one walk finds (tilecc/host/function_index.py), kept on first use;
    # not an init field, so dataclasses.replace gives a changed function none
    index: Any = field(default=None, init=False, compare=False, repr=False)

    def _decorator_symbol(self, key: str, enum: str) -> str | None:
        """The member named by `key=pl.<enum>.X` (or `key=<enum>.X`, with the enum imported
        from pypto.language), as pypto's decorator parser accepts both."""
        for name, value in self.decorator or ():
            if name != key:
                continue
            if isinstance(value, Symbol) and value.path.rsplit(".", 1)[0] == f"pl.{enum}":
                return value.path.rsplit(".", 1)[1]
            if isinstance(value, Attr) and value.value == Var(enum):
                return value.attr
        return None

    @property
    def level(self) -> str | None:
        """The level, pypto's readability aliases resolved (`NODE` is `HOST`, ...)."""
        level = self._decorator_symbol("level", "Level")
        return LEVEL_ALIASES.get(level, level) if level is not None else None

    @property
    def role(self) -> str | None:
        return self._decorator_symbol("role", "Role")

    @property
    def func_type(self) -> str:
        return self._decorator_symbol("type", "FunctionType") or "Opaque"

    @property
    def is_host_orchestrator(self) -> bool:
        """reference/pld.md: level HOST and (type Orchestration or role Orchestrator)."""
        return self.level == "HOST" and (self.func_type == "Orchestration" or self.role == "Orchestrator")


@dataclass(frozen=True, slots=True)
class Program:
    """A `@pl.program` class; functions keep their source order. `decorated` is False for
    an undecorated class of `@pl.function` methods that the file turns into a program by
    calling `pl.program(Cls)`."""
    name: str
    functions: tuple[Function, ...]
    decorator: tuple[tuple[str, Expr], ...] | None = None
    doc: str | None = None
    decorated: bool = True
    comments: tuple[str, ...] = ()   # before the class (and on its header lines)

    def function(self, name: str) -> Function:
        for func in self.functions:
            if func.name == name:
                return func
        raise KeyError(name)


@dataclass(frozen=True, slots=True)
class Verbatim:
    """A top-level statement outside any program, kept as source text (normalised by ast).
    `programs` are the @pl.program classes nested in it (placeholders in `source`)."""
    source: str
    programs: tuple[Program, ...] = ()


@dataclass(frozen=True, slots=True)
class Module:
    items: tuple[Program | Function | Verbatim, ...]

    @property
    def programs(self) -> tuple[Program, ...]:
        """Every program of the file in source order, nested ones included."""
        out: list[Program] = []
        for item in self.items:
            if isinstance(item, Program):
                out.append(item)
            elif isinstance(item, Verbatim):
                out.extend(item.programs)
        return tuple(out)

    def program(self, name: str) -> Program:
        for prog in self.programs:
            if prog.name == name:
                return prog
        raise KeyError(name)

    def replace_programs(self, programs: list[Program]) -> Module:
        """The module with its programs replaced in order (same object if none changed)."""
        it = iter(programs)
        items: list[Program | Function | Verbatim] = []
        for item in self.items:
            if isinstance(item, Program):
                items.append(next(it))
            elif isinstance(item, Verbatim) and item.programs:
                nested = tuple(next(it) for _ in item.programs)
                same = all(a is b for a, b in zip(nested, item.programs))
                items.append(item if same else Verbatim(item.source, nested))
            else:
                items.append(item)
        if all(a is b for a, b in zip(items, self.items)):
            return self
        return Module(tuple(items))


# ---------------------------------------------------------------- traversal


def child_bodies(stmt: Stmt) -> tuple[tuple[Stmt, ...], ...]:
    """The nested statement lists of a compound statement, in source order."""
    if isinstance(stmt, (For, While, With)):
        return (stmt.body,)
    if isinstance(stmt, If):
        return (stmt.then, stmt.orelse)
    return ()


def stmt_exprs(stmt: Stmt) -> tuple[Expr, ...]:
    """The expressions a statement holds directly (not those of nested statements)."""
    if isinstance(stmt, Assign):
        return (stmt.value,) if stmt.annotation is None else (stmt.value, stmt.annotation)
    if isinstance(stmt, ExprStmt):
        return (stmt.expr,)
    if isinstance(stmt, Return):
        return stmt.values
    if isinstance(stmt, For):
        return (stmt.iterable,)
    if isinstance(stmt, (While, If)):
        return (stmt.cond,)
    if isinstance(stmt, With):
        return (stmt.context,)
    return ()


def _kwarg_values(kwargs: tuple[tuple[str, Expr], ...]) -> tuple[Expr, ...]:
    return tuple(v for _, v in kwargs)


# expression type -> its direct sub-expressions, in source order (one lookup, not a chain of
# isinstance tests: the walks below visit every node of a program several times)
SUB_EXPRS: dict[type, Callable[[Any], tuple[Expr, ...]]] = {
    OpCall: lambda e: e.args + _kwarg_values(e.kwargs) if e.kwargs else e.args,
    FuncCall: lambda e: e.args + _kwarg_values(e.kwargs) if e.kwargs else e.args,
    Call: lambda e: (e.func,) + e.args + _kwarg_values(e.kwargs),
    Attr: lambda e: (e.value,),
    BinOp: lambda e: (e.left, e.right),
    UnaryOp: lambda e: (e.operand,),
    Compare: lambda e: (e.left,) + e.comparators,
    BoolOp: lambda e: e.values,
    IfExp: lambda e: (e.cond, e.then, e.orelse),
    TupleExpr: lambda e: e.items,
    ListExpr: lambda e: e.items,
    DictExpr: lambda e: e.keys + e.values,
    Formatted: lambda e: (e.value,) if e.spec is None else (e.value, e.spec),
    FString: lambda e: e.parts,
    YieldExpr: lambda e: (e.value,) if e.value is not None else (),
    Subscript: lambda e: (e.value, e.index),
    ListComp: lambda e: (e.elt, e.target, e.iterable) + e.conditions,
    Slice: lambda e: tuple(x for x in (e.lower, e.upper, e.step) if x is not None),
}
_NOSUB_EXPRS: Callable[[Any], tuple[Expr, ...]] = lambda e: ()   # Var, Const, Symbol


def sub_exprs(expr: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of an expression."""
    return SUB_EXPRS.get(type(expr), _NOSUB_EXPRS)(expr)


def target_vars(target: Var | TupleExpr | Subscript) -> tuple[Var, ...]:
    """The variables an assignment (re)binds: `C[i] = v` rebinds C (pypto lowers it to
    `C = tensor.assemble(C, v, ...)`)."""
    if isinstance(target, Var):
        return (target,)
    if isinstance(target, Subscript):
        inner = target.value
        return target_vars(inner) if isinstance(inner, (Var, TupleExpr, Subscript)) else ()
    return tuple(v for v in target.items if isinstance(v, Var))


def walk_stmts(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """Every statement of a body, nested ones included, in visit (source) order."""
    for stmt in body:
        yield stmt
        for inner in child_bodies(stmt):
            yield from walk_stmts(inner)


def walk_expr(expr: Expr) -> Iterator[Expr]:
    """The expression and all its sub-expressions, pre-order."""
    stack = [expr]
    table = SUB_EXPRS
    while stack:
        node = stack.pop()
        yield node
        if (children := table.get(type(node))) is not None:
            stack.extend(reversed(children(node)))
