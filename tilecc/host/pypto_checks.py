"""The parse-time refusals of pypto's parser (python/pypto/language/parser/ast_parser.py
and the pld wrappers it calls), applied to a parsed program.

Contract: `check_program(program, fail)` calls `fail(line, col, message)` (which raises a
ParseError) for the first of these, in source order:
- a HOST-only op (ops.HOST_ONLY: pld.tensor.alloc_window_buffer, pld.system.world_size)
  in a function whose level is not HOST, or inside a device scope (`with pl.incore()`,
  `with pl.spmd(...)`, `with pl.at(level=pl.Level.CORE_GROUP, ...)`, a loop over
  pl.spmd / pl.split_aiv): "... can only be called in HOST orchestration context";
- an alloc_window_buffer name already declared in the program (names are unique across
  all its functions);
- argument checks of the op table's signature (ops.OpSpec.bind) for the HOST-only ops and
  pld.tensor.window (dtype= is required; world_size takes no arguments), and of
  alloc_window_buffer's two forms: a shape (a list / tuple) needs dtype= and non-empty,
  positive static dimensions; a byte size takes no dtype=;
- `device=` on a call of a program function that is not an orchestrator (function type
  Orchestration or role Orchestrator): "Function 'f' does not accept keyword argument
  'device'".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from tilecc.errors import InterpError
from tilecc.host import ir
from tilecc.host.function_index import function_index
from tilecc.host.ops import HOST_ONLY, OPS

Fail = Callable[[int, int, str], NoReturn]
ALLOC = "pld.tensor.alloc_window_buffer"
CHECKED_SIGNATURES = HOST_ONLY | {"pld.tensor.window"}


def _is_orchestrator(func: ir.Function) -> bool:
    return func.func_type == "Orchestration" or func.role == "Orchestrator"


class _Checker:
    def __init__(self, program: ir.Program, fail: Fail) -> None:
        self.program = program
        self.fail = fail
        self.buffers: set[str] = set()
        self.functions = {f.name: f for f in program.functions}

    def function(self, func: ir.Function) -> None:
        """The calls of the function in source order (its index, function_index.py)."""
        self.func = func
        for call, in_device in function_index(func).calls:
            if isinstance(call, ir.OpCall):
                self.op(call, in_device)
            else:
                self.dispatch(call)

    def op(self, call: ir.OpCall, in_device: bool) -> None:
        if call.op in HOST_ONLY and (self.func.level != "HOST" or in_device):
            self.fail(call.line, call.col,
                      f"{call.op}() can only be called in HOST orchestration context (not inside InCore / "
                      f"SPMD scopes); current function level: {self.func.level or 'unset'} (use "
                      "@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator) outside any device scope)")
        if call.op in CHECKED_SIGNATURES:
            try:
                OPS[call.op].bind(call.args, dict(call.kwargs))
            except InterpError as err:
                self.fail(call.line, call.col, str(err))
        if call.op == ALLOC:
            self.alloc(call)
        if call.op == "pld.tensor.window" and not isinstance(call.args[1] if len(call.args) > 1 else
                                                              call.kwarg("shape"), (ir.ListExpr, ir.TupleExpr)):
            self.fail(call.line, call.col, "pld.tensor.window shape must be a list of dimensions")

    def alloc(self, call: ir.OpCall) -> None:
        name = call.kwarg("name")
        if isinstance(name, ir.Const) and isinstance(name.value, str):
            if name.value in self.buffers:
                self.fail(call.line, call.col, f"pld.tensor.alloc_window_buffer name '{name.value}' is already "
                                               "declared in this program (window buffer names are unique "
                                               "across all functions)")
            self.buffers.add(name.value)
        size = call.args[0] if call.args else call.kwarg("size")
        has_dtype = call.kwarg("dtype") is not None
        if isinstance(size, (ir.ListExpr, ir.TupleExpr)):
            if not has_dtype:
                self.fail(call.line, call.col, "pld.tensor.alloc_window_buffer requires dtype= when the first "
                                               "argument is a shape (list / tuple of per-rank dimensions)")
            if not size.items:
                self.fail(call.line, call.col, "pld.tensor.alloc_window_buffer shape must be non-empty")
            for i, dim in enumerate(size.items):
                value = dim.value if isinstance(dim, ir.Const) else None
                if type(value) is int and value <= 0:
                    self.fail(call.line, call.col, f"pld.tensor.alloc_window_buffer shape dimension[{i}] is "
                                                   f"{value}; all dimensions must be positive")
        elif has_dtype:
            self.fail(call.line, call.col, "pld.tensor.alloc_window_buffer dtype= is only valid when the first "
                                           "argument is a shape (list / tuple), not a scalar byte size")

    def dispatch(self, call: ir.FuncCall) -> None:
        callee = self.functions.get(call.func)
        if callee is None or _is_orchestrator(callee) or all(k != "device" for k, _ in call.kwargs):
            return
        self.fail(call.line, call.col, f"Function '{call.func}' does not accept keyword argument 'device' "
                                       "(only orchestrators -- type Orchestration or role Orchestrator -- "
                                       "are dispatched to a device)")


def check_program(program: ir.Program, fail: Fail) -> None:
    checker = _Checker(program, fail)
    for func in program.functions:
        checker.function(func)
