"""Execute a host program on N ranks: one thread per rank runs the host orchestrator (SPMD).

Contract: `run_host(module, program, function, world_size, args)` runs `function` on every
rank with the same host arguments (numpy arrays are shared host memory) and returns the
per-rank return values. Semantics of the pieces:
- `self.f(..., device=r)` runs chip-level function f only on the rank whose id is r (so
  `for r in pl.range(pld.world_size())` dispatches each rank's own work); windows passed to
  it become that rank's numpy views, and the value of the call is the same on every rank
  (dispatch.py). Arguments bind by position, keyword and default.
- `pld.tensor.alloc_window_buffer(size)` / `pld.tensor.window(buf, shape, dtype=)` allocate
  and view symmetric window memory (world.py); `pld.tensor.allreduce(data, signal, ...)` is
  the credit-barrier mesh allreduce (collectives.py). An allreduce without a signal is
  refused (the signal comes from SynthesizeAllReduceSignals) unless the run asks for the
  signal-free reference collective, which runs a program as written.
- Loops: `pl.range` / `pl.parallel` / `pl.unroll` with (stop) or (start, stop[, step]),
  and pypto's SSA while `pl.while_` ended by `pl.cond(c)`; `init_values=` binds the
  loop-carried names, and `pl.yield_(...)` gives their next values.
- Chip / InCore ops: pl.load, pl.store, pl.tensor.create and elementwise pl.add / sub / mul
  / div / maximum / minimum (result in the first tensor operand's dtype).
- Module constants (`SIZE = 64` outside the program) are visible to every function.
- Expressions are evaluated as expressions.py says (Python's operators, subscripts of the
  rank's own view of a window, ...).
Anything else raises InterpError naming the op; an index a value does not have, or
arithmetic numpy refuses, is an InterpError at the subscript (or the enclosing call) line
and column, never a bare Python exception; a failure on one rank aborts all ranks.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from tilecc.errors import InterpError
from tilecc.host import ir
from tilecc.host.ops import OPS
from tilecc.host.runtime.backend import Backend
from tilecc.host.runtime.failures import first_failure
from tilecc.host.runtime.op_local import StopWhile
from tilecc.host.runtime.signatures import DynamicDim, bind_dynamic_dims, param_type
from tilecc.host.runtime.dispatch import NotOnThisRank, dispatch_result, returned_arguments
from tilecc.host.runtime.expressions import VALUE_ERRORS, ExprEvaluator, indexed_message, local_value
from tilecc.host.runtime.module_values import module_constants
from tilecc.host.runtime.world import Window, World

LOOPS = ("pl.range", "pl.parallel", "pl.unroll", "pl.pipeline")   # pipeline's stage= changes no value
SPLIT_AIV = "pl.split_aiv"
WHILE = "pl.while_"


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class RankInterpreter(ExprEvaluator):
    """Runs functions of one program on one rank; expressions are ExprEvaluator's
    (expressions.py), op calls and program-function calls are below."""

    def __init__(self, program: ir.Program, world: Backend, rank: int, constants: dict[str, Any],
                 reference_collectives: bool = False, path: str = "<program>") -> None:
        self.program = program
        self.path = path   # the source file, for the position of a failing op
        self.world = world
        self.rank = rank
        self.constants = dict(constants)   # pl.dynamic dimensions get their values per rank
        self.dynamic = {k for k, v in constants.items() if isinstance(v, DynamicDim)}
        self.reference_collectives = reference_collectives
        self.yielded: tuple[Any, ...] | None = None
        self.returned: dict[str, tuple[int | None, ...] | None] = {}   # returned_arguments by function

    def located(self, node: ir.Subscript | ir.FuncCall | ir.OpCall, message: str) -> InterpError:
        """An error at `node`'s source position (none for nodes a pass made)."""
        where = f"{self.path}:{node.line}:{node.col}: " if node.line else ""
        return InterpError(f"rank {self.rank}: {where}{message}")

    # ------------------------------------------------------------ functions

    def call(self, func: ir.Function, args: Sequence[Any]) -> Any:
        if len(args) != len(func.params):
            raise InterpError(f"`{func.name}` takes {len(func.params)} arguments, got {len(args)}")
        bound: dict[str, int] = {}
        bind_dynamic_dims(func, args, self.dynamic, bound)
        self.constants.update(bound)
        env = {p.name: self.as_annotated(p, a) for p, a in zip(func.params, args)}
        try:
            self.exec_body(func.body, env)
        except _Return as ret:
            return ret.value
        return None

    def as_annotated(self, param: ir.Param, arg: Any) -> Any:
        """A window or tensor viewed in the parameter's annotated shape when only the shape
        differs (pypto passes a [SIZE] window to a [1, SIZE] parameter)."""
        ptype = param_type(param.annotation)
        shape = getattr(arg, "shape", None)
        if ptype is None or ptype.kind != "tensor" or shape is None or not isinstance(arg, (Window, np.ndarray)):
            return arg
        try:
            dims = tuple(int(self.eval(d, {})) for d in ptype.dims)
        except (InterpError, TypeError, ValueError):
            return arg
        if dims == tuple(shape) or int(np.prod(dims, dtype=np.int64)) != int(np.prod(shape, dtype=np.int64)):
            return arg
        if isinstance(arg, Window):
            return Window(arg.buffer, arg.dtype, dims)
        return arg.reshape(dims)

    def exec_body(self, body: tuple[ir.Stmt, ...], env: dict[str, Any]) -> None:
        for stmt in body:
            self.exec_stmt(stmt, env)

    def bind(self, target: ir.Var | ir.TupleExpr | ir.Subscript, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, ir.Var):
            env[target.name] = value
            return
        if isinstance(target, ir.Subscript):
            self.write_region(target, value, env)
            return
        values = tuple(value)
        if len(values) != len(target.items):
            raise InterpError(f"cannot unpack {len(values)} values into {len(target.items)} names")
        for var, item in zip(target.items, values):
            if not isinstance(var, ir.Var):
                raise InterpError(f"cannot assign to {var!r} in a tuple assignment")
            env[var.name] = item

    def write_region(self, target: ir.Subscript, value: Any, env: dict[str, Any]) -> None:
        """`C[i, a:b] = v` (pypto's assemble into C): numpy indexing of the rank's own copy;
        `v` must have the region's elements (leading unit axes aside)."""
        array = local_value(self.eval(target.value, env), self.world, self.rank)
        if not isinstance(array, np.ndarray):
            raise InterpError(f"rank {self.rank}: `{target.value!r} [...] = ...` needs a tensor or window")
        index = self.eval(target.index, env)
        try:
            region = array[index]
        except VALUE_ERRORS as err:
            raise self.located(target, indexed_message(target, index, array, err)) from None
        source = np.asarray(local_value(value, self.world, self.rank))
        if source.size != np.size(region):
            raise self.located(target, f"writing {list(source.shape)} into a region of shape "
                                       f"{list(np.shape(region))}")
        with np.errstate(over="ignore", invalid="ignore"):
            array[index] = source.reshape(np.shape(region)).astype(array.dtype)

    def exec_stmt(self, stmt: ir.Stmt, env: dict[str, Any]) -> None:
        if isinstance(stmt, ir.Assign):
            self.bind(stmt.target, self.eval(stmt.value, env), env)
        elif isinstance(stmt, ir.ExprStmt):
            self.eval(stmt.expr, env)
        elif isinstance(stmt, ir.Return):
            values = tuple(self.eval(v, env) for v in stmt.values)
            raise _Return(values[0] if len(values) == 1 else (values or None))
        elif isinstance(stmt, ir.For):
            self.exec_for(stmt, env)
        elif isinstance(stmt, ir.While):
            while self.eval(stmt.cond, env):
                try:
                    self.exec_body(stmt.body, env)
                except _Break:
                    break
                except _Continue:
                    continue
        elif isinstance(stmt, ir.If):
            self.exec_body(stmt.then if self.eval(stmt.cond, env) else stmt.orelse, env)
        elif isinstance(stmt, ir.With):
            self.exec_body(stmt.body, env)   # scopes (pl.incore() ...) do not change values
        elif isinstance(stmt, ir.Break):
            raise _Break()
        elif isinstance(stmt, ir.Continue):
            raise _Continue()

    def exec_for(self, stmt: ir.For, env: dict[str, Any]) -> None:
        """pl.range-like loops over their bounds, and pypto's SSA while
        `for (a, b) in pl.while_(init_values=...)`, whose body's `pl.cond(c)` ends the loop
        when c is false. After the loop the names a body's `... = pl.yield_(...)` binds
        hold the carried values (the init values if the body never ran)."""
        call = stmt.iterable
        if not isinstance(call, ir.OpCall) or call.op not in LOOPS + (WHILE, SPLIT_AIV):
            raise InterpError(f"cannot execute a loop over {getattr(call, 'op', call)!r}")
        init = call.kwarg("init_values")
        if stmt.iter_args is not None:
            values = tuple(self.eval(init, env)) if init is not None else ()
            self.bind(ir.TupleExpr(stmt.iter_args), values, env)
        if call.op == WHILE:
            steps: Iterable[int | None] = itertools.repeat(None)
        elif call.op == SPLIT_AIV:
            steps = self.aiv_lanes(call, env)
        elif stmt.index is None:   # the parser gives every pl.range-like loop an index
            raise InterpError(f"a {call.op} loop needs an index variable")
        else:
            bounds = [int(self.eval(a, env)) for a in call.args]
            if not 1 <= len(bounds) <= 3:
                raise InterpError(f"{call.op} takes 1 to 3 bounds, got {len(bounds)}")
            steps = range(*bounds)
        for i in steps:
            if stmt.index is not None:
                env[stmt.index.name] = i
            self.yielded = None
            try:
                self.exec_body(stmt.body, env)
            except (_Break, StopWhile):
                break
            except _Continue:
                pass
            if stmt.iter_args is not None and self.yielded is not None:
                self.bind(ir.TupleExpr(stmt.iter_args), self.yielded, env)
        if stmt.iter_args is not None:
            carried = tuple(env[v.name] for v in stmt.iter_args)
            for inner in stmt.body:
                if isinstance(inner, ir.Assign) and isinstance(inner.value, ir.OpCall) and inner.value.op == "pl.yield_":
                    self.bind(inner.target, carried[0] if isinstance(inner.target, ir.Var) else carried, env)

    def aiv_lanes(self, call: ir.OpCall, env: dict[str, Any]) -> range:
        """`for aiv_id in pl.split_aiv(n, mode=pl.SplitMode.NONE)`: the task-parallel form
        runs the whole body once per lane, in lane order; the data-parallel modes halve
        every tile between the lanes, which the host runtime does not model."""
        mode = call.kwarg("mode")
        if not (isinstance(mode, ir.Symbol) and mode.path == "pl.SplitMode.NONE"):
            raise InterpError(f"rank {self.rank}: pl.split_aiv with mode {getattr(mode, 'path', mode)} halves "
                              "tiles between AIV lanes; the host runtime runs mode=pl.SplitMode.NONE only")
        if len(call.args) != 1:
            raise InterpError(f"rank {self.rank}: pl.split_aiv takes the lane count, got {len(call.args)} arguments")
        return range(int(self.eval(call.args[0], env)))

    # ------------------------------------------------------------ calls

    def dispatch(self, call: ir.FuncCall, env: dict[str, Any]) -> Any:
        """A call of a program function; with `device=r` it runs on rank r only and gives
        every rank the same value (dispatch.py)."""
        try:
            func = self.program.function(call.func)
        except KeyError:
            raise InterpError(f"program `{self.program.name}` has no function `{call.func}`") from None
        try:
            kwargs = {k: self.eval(v, env) for k, v in call.kwargs}
            positional = [self.eval(a, env) for a in call.args]
        except VALUE_ERRORS as err:   # arithmetic on the arguments (numpy's shape errors, ...)
            raise self.located(call, f"`{call.func}`: {type(err).__name__}: {str(err).strip()}") from None
        device = kwargs.pop("device", None)
        for scheduling in ("deps", "attrs"):   # task edges and call-site directions change no value
            kwargs.pop(scheduling, None)
        args = self.bind_arguments(func, positional, kwargs)
        executed = device is None or int(device) == self.rank
        actual = None
        if executed:
            local = args if func.is_host_orchestrator else [local_value(a, self.world, self.rank) for a in args]
            actual = self.call(func, local)
            if device is None:
                return actual
        if func.name not in self.returned:
            self.returned[func.name] = returned_arguments(self.program, func)
        return dispatch_result(self.returned[func.name], args, actual, executed, func.name, int(device))

    def bind_arguments(self, func: ir.Function, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
        """Positional arguments, then keywords by parameter name, then defaults."""
        if len(args) > len(func.params):
            raise InterpError(f"`{func.name}` takes {len(func.params)} arguments, got {len(args)}")
        for param in func.params[len(args):]:
            if param.name in kwargs:
                args.append(kwargs.pop(param.name))
            elif param.default is not None:
                args.append(self.eval(param.default, {}))
            else:
                raise InterpError(f"`{func.name}` is missing argument `{param.name}`")
        if kwargs:
            raise InterpError(f"`{func.name}` got unexpected keywords {sorted(kwargs)}")
        return args

    def op(self, call: ir.OpCall, env: dict[str, Any]) -> Any:
        """An op call: arguments bound by the op table's signature, then its runtime."""
        try:
            args = [self.eval(a, env) for a in call.args]
            kwargs = {k: self.eval(v, env) for k, v in call.kwargs}
        except VALUE_ERRORS as err:   # arithmetic on the arguments (numpy's shape errors, ...)
            raise self.located(call, f"{call.op}: {type(err).__name__}: {str(err).strip()}") from None
        if (remote := next((v for v in [*args, *kwargs.values()] if isinstance(v, NotOnThisRank)), None)) is not None:
            raise InterpError(f"rank {self.rank}: `{call.op}` cannot use {remote!r}")
        spec = OPS.get(call.op)
        if spec is None or spec.run is None:
            raise InterpError(f"rank {self.rank}: the host runtime does not implement op `{call.op}`")
        try:
            return spec.run(self, spec.bind(args, kwargs))
        except InterpError as err:
            message = str(err).removeprefix(f"rank {self.rank}: ")
            if message.startswith("aborted") or call.line == 0:
                raise
            raise InterpError(f"rank {self.rank}: {self.path}:{call.line}:{call.col}: {message}") from None


def run_host(module: ir.Module, program: str, function: str, world_size: int,
             args: Sequence[Any] = (), timeout: float = 20.0, world: World | None = None,
             reference_collectives: bool = False, values: Mapping[str, Any] | None = None,
             path: str = "<program>") -> list[Any]:
    """Run `program.function` on `world_size` ranks; returns each rank's return value.
    Pass `world` to inspect window memory (signals, data) afterwards. With
    `reference_collectives`, an allreduce without a signal runs the signal-free reference
    collective (collectives.py), so the program runs as written, before the pass. `values`
    gives the names a program reads from where it is defined that are not module
    constants, such as the parameters of the builder function that makes it."""
    prog = module.program(program)
    func = prog.function(function)
    world = world if world is not None else World(world_size, timeout)
    if world.world_size != world_size:
        raise InterpError(f"world of {world.world_size} ranks given for a run on {world_size}")
    constants = {**module_constants(module), **(values or {})}
    results: list[Any] = [None] * world_size
    errors: list[BaseException | None] = [None] * world_size

    def run_rank(rank: int) -> None:
        try:
            interpreter = RankInterpreter(prog, world, rank, constants, reference_collectives, path)
            results[rank] = interpreter.call(func, interpreter.bind_arguments(func, list(args), {}))
        except BaseException as err:  # noqa: BLE001 - reported below, after every rank stopped
            errors[rank] = err
            world.fail(f"rank {rank} failed: {err}")

    threads = [threading.Thread(target=run_rank, args=(r,), daemon=True) for r in range(world_size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if (failure := first_failure(errors)) is not None:
        raise failure
    return results

