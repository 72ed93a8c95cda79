"""pypto's call forms of the host ops, normalised to the IR's one spelling per op.

Contract: `resolve(dotted, args, kwargs, fail)` maps a parsed `pl.` / `pld.` call to
(op, args, kwargs) as the IR holds it, or calls `fail(message)` (which raises) for a call
pypto itself rejects:
- short forms resolve to full op names (`pld.window` -> `pld.tensor.window`, ...);
- `pld.all_reduce(t, op=...)` in mesh mode is pypto's ergonomic wrapper for
  `pld.tensor.allreduce(t, op=...)` with a compiler-synthesized signal; ring mode (or an
  explicit `nranks`) allocates its own signal in pypto's Python wrapper and is kept as is;
- `pld.tensor.allreduce` follows pypto's user-facing signature `(target, signal=<missing>,
  *, op=Sum, mode="mesh", core_num=1)` (reference/pld.md: 1 or 2 positional arguments):
  `target=` / `signal=` keywords become positional arguments, so the IR holds the
  positional arguments as written; `op` is keyword-only, and any other positional count
  (a third argument included) is left for SynthesizeAllReduceSignals to reject with the
  spec's "expects target[, signal]" error at the call; `signal=None` is rejected here
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
    for name, position in (("target", 0), ("signal", 1)):
        value = next((v for k, v in kwargs if k == name), None)
        if value is None:
            continue
        if len(args) != position:
            fail(f"pld.tensor.allreduce got `{name}` both positionally and as {name}= "
                 "(or an earlier argument is missing)")
        args = args + (value,)
        kwargs = tuple((k, v) for k, v in kwargs if k != name)
    if len(args) >= 2 and args[1] == ir.Const(None):
        fail("pld.tensor.allreduce: signal=None is not allowed; omit the signal "
             "argument to let SynthesizeAllReduceSignals create one")
    return args, kwargs
