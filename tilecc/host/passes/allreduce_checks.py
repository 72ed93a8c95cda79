"""The checks SynthesizeAllReduceSignals makes on every `pld.tensor.allreduce` call, and
its error class.

Contract: `check_call(call, scope, local)` returns the call's core_num (an int; the
expression itself when it is an int expression over names of the program's scope that
tilecc cannot fold, e.g. a builder's parameter, which pypto reads as a Python int when it
decorates the class; or None when the call passes an explicit signal and core_num is not
a compile-time int) or raises AllReduceSignalError at the call's line:col for what the
spec and pypto's user-facing `pld.tensor.allreduce(target, signal=<missing>, *, op,
mode="mesh", core_num=1)` reject (reference/pld.md):
- a positional argument count other than target or target, signal (spec 002, Checks;
  `op` is keyword-only, so a third positional argument is an error, not `op`);
- a signal argument that is a constant or an enum symbol (`allreduce(p, pld.ReduceOp.Sum)`:
  the reduce op passed where the signal goes);
- core_num that is a compile-time int but not positive, or on an implicit call (whose
  signal the pass sizes with it) anything but a positive compile-time int; module-level
  constants and constant expressions fold as pypto's parser folds them
  (tilecc/host/constants.py);
- op that is a constant or a `pl` / `pld` symbol other than pld.ReduceOp.Sum / Max / Min /
  Prod (pypto's ReduceOp has no other member; a name, such as a builder's parameter or
  an imported `ReduceOp.Sum`, is left to pypto);
- mode other than "mesh" / "ring"; mode="ring" with core_num != 1; mode="ring" without an
  explicit signal (host signal synthesis only supports mesh mode).
AllReduceSignalError is both the spec's ValueError and a PassError (so every tilecc
caller prints it as one line); `str()` is `path:line:col: error: message`, with the path
filled in by the pipeline that knows the file (`located`).
"""

from __future__ import annotations

from tilecc.errors import PassError
from tilecc.host import ir
from tilecc.host.constants import Scope, decoration_time_int, fold_int

MODES = ("mesh", "ring")
REDUCE_OPS = ("Sum", "Max", "Min", "Prod")   # pld.ReduceOp


class AllReduceSignalError(PassError, ValueError):
    """The spec's ValueError, at the source position of the offending call (0:0 if unknown)."""

    def __init__(self, message: str, line: int = 0, col: int = 0, path: str = "<string>") -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.path = path

    def located(self, path: str) -> AllReduceSignalError:
        self.path = path
        return self

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: error: {self.message}"


def _fail(call: ir.OpCall, message: str) -> AllReduceSignalError:
    return AllReduceSignalError(f"pld.tensor.allreduce {message}", call.line, call.col)


def check_arg_count(call: ir.OpCall) -> None:
    if len(call.args) not in (1, 2):
        raise _fail(call, f"expects target[, signal], got {len(call.args)} positional arguments "
                          "(op=, mode= and core_num= are keyword-only)")


def check_call(call: ir.OpCall, scope: Scope, local: set[str]) -> int | ir.Expr | None:
    check_arg_count(call)
    implicit = len(call.args) == 1
    if not implicit and isinstance(call.args[1], (ir.Const, ir.Symbol)):
        shown = call.args[1].path if isinstance(call.args[1], ir.Symbol) else repr(call.args[1].value)
        raise _fail(call, f"signal must be an INT32 window tensor, got the constant `{shown}` "
                          "(pass the reduce op as op=)")
    core_num_expr = call.kwarg("core_num")
    core_num = 1 if core_num_expr is None else fold_int(core_num_expr, scope.constants, local)
    if core_num_expr is not None and core_num is None and decoration_time_int(core_num_expr, scope.names, local):
        return core_num_expr   # a builder's parameter, say: an int pypto knows, tilecc does not
    if (core_num is None and implicit) or (core_num is not None and core_num <= 0):
        raise _fail(call, "core_num must be a positive integer constant"
                          + (" for signal synthesis" + _unbound_names(core_num_expr, scope, local)
                             if core_num is None else f", got {core_num}"))
    op = call.kwarg("op")
    if (isinstance(op, ir.Const) or (isinstance(op, ir.Symbol) and op.path not in
                                     [f"pld.ReduceOp.{name}" for name in REDUCE_OPS])):
        shown = op.path if isinstance(op, ir.Symbol) else repr(op.value)
        raise _fail(call, f"op must be pld.ReduceOp.Sum, .Max, .Min or .Prod, got `{shown}`")
    mode = call.kwarg("mode")
    if isinstance(mode, ir.Const):
        if mode.value not in MODES:
            raise _fail(call, f"mode must be \"mesh\" or \"ring\", got {mode.value!r}")
        if mode.value == "ring" and implicit:
            raise _fail(call, "mode=\"ring\" requires an explicit signal; host signal synthesis "
                              "only supports mesh mode")
        if mode.value == "ring" and core_num is not None and core_num != 1:
            raise _fail(call, f"mode=\"ring\" requires core_num == 1, got {core_num}")
    return core_num


def _unbound_names(expr: ir.Expr | None, scope: Scope, local: set[str]) -> str:
    """Why the names of a core_num expression are not compile-time ints, if they are why."""
    for node in ir.walk_expr(expr) if expr is not None else ():
        if isinstance(node, ir.Var) and node.name in local:
            return f" (`{node.name}` is a variable of the function, not a Python int)"
        if isinstance(node, ir.Var) and node.name not in scope.names:
            return f" (`{node.name}` is not bound where the program is defined)"
    return ""
