"""pypto's call forms of the host ops, normalised to the IR's one spelling per op.

Contract: `resolve(dotted, args, kwargs, fail)` maps a parsed `pl.` / `pld.` call to
(op, args, kwargs) as the IR holds it, or calls `fail(message)` (which raises) for a call
pypto itself rejects:
- short forms resolve to full op names (`pld.window` -> `pld.tensor.window`, ...);
- `pld.all_reduce(t, op=...)` in mesh mode is pypto's ergonomic wrapper for
  `pld.tensor.allreduce(t, op=...)` with a compiler-synthesized signal; ring mode (or an
  explicit `nranks`) allocates its own signal in pypto's Python wrapper and is kept as is;
- `pld.tensor.allreduce` follows pypto's signature `(target, signal=<missing>, op=Sum,
  *, mode, core_num)` (python/pypto/language/distributed/op/tensor_ops.py): `target=` /
  `signal=` keywords become positional arguments and a third positional argument becomes
  `op=`, so the IR always holds target[, signal] positionally; `signal=None` is rejected
  ("omit the signal argument for host synthesis").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from tilecc.host import ir

SHORT_FORMS = {
    "pld.window": "pld.tensor.window",
    "pld.alloc_window_buffer": "pld.tensor.alloc_window_buffer",
    "pld.world_size": "pld.system.world_size",
    "pld.rank": "pld.system.rank",
    "pld.nranks": "pld.system.nranks",
    "pld.get_comm_ctx": "pld.system.get_comm_ctx",
}
ALLREDUCE = "pld.tensor.allreduce"
ALLOC_WINDOW_BUFFER = "pld.tensor.alloc_window_buffer"

Args = tuple[ir.Expr, ...]
Kwargs = tuple[tuple[str, ir.Expr], ...]
Fail = Callable[[str], NoReturn]


def resolve(dotted: str, args: Args, kwargs: Kwargs, fail: Fail) -> tuple[str, Args, Kwargs]:
    op = SHORT_FORMS.get(dotted, dotted)
    if op == "pld.all_reduce":
        op, kwargs = ergonomic_all_reduce(kwargs, fail)
    if op == ALLREDUCE:
        args, kwargs = allreduce_arguments(args, kwargs, fail)
    return op, args, kwargs


def ergonomic_all_reduce(kwargs: Kwargs, fail: Fail) -> tuple[str, Kwargs]:
    """pypto's pld.all_reduce: mesh mode delegates to pld.tensor.allreduce(target, op=op)."""
    keys = dict(kwargs)
    if set(keys) - {"op", "mode", "nranks"}:
        fail("pld.all_reduce takes op=, mode= and nranks= keywords only")
    mode = keys.get("mode", ir.Const("mesh"))
    if mode != ir.Const("mesh") or "nranks" in keys:
        return "pld.all_reduce", kwargs
    return ALLREDUCE, (("op", keys.get("op", ir.Symbol("pld.ReduceOp.Sum"))),)


def allreduce_arguments(args: Args, kwargs: Kwargs, fail: Fail) -> tuple[Args, Kwargs]:
    keys = [k for k, _ in kwargs]
    for name, position in (("target", 0), ("signal", 1)):
        value = next((v for k, v in kwargs if k == name), None)
        if value is None:
            continue
        if len(args) != position:
            fail(f"pld.tensor.allreduce got `{name}` both positionally and as {name}= "
                 "(or an earlier argument is missing)")
        args = args + (value,)
        kwargs = tuple((k, v) for k, v in kwargs if k != name)
    if len(args) == 3:
        if "op" in keys:
            fail("pld.tensor.allreduce got `op` both positionally and as op=")
        args, kwargs = args[:2], (("op", args[2]),) + kwargs
    if len(args) >= 2 and args[1] == ir.Const(None):
        fail("pld.tensor.allreduce: signal=None is not allowed; omit the signal "
             "argument to let SynthesizeAllReduceSignals create one")
    return args, kwargs
