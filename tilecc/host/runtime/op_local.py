"""Runtime implementations of the rank-local pl / pld ops (the `run` column of
tilecc/host/ops.py): system queries, window allocation and views, tile / tensor ops.

Contract: each function takes the rank's OpContext and the call's arguments bound by
name (OpSpec.bind: positional and keyword arguments, defaults filled in) and returns the
op's value. Windows are read and written through the rank's own copy
(`Window.local`); nothing here talks to another rank. Semantics follow pypto's
python/pypto/language/op (tile_ops.py, tensor_ops.py) and distributed/op:
- pl.load(t, offsets, shapes) copies a region; pl.store(tile, offsets, dst) writes it
  and returns dst (window-as-result); pl.slice / pl.tensor.slice(t, shape, offset) is
  the region at `offset` of extent `shape`.
- pl.tile.full(shape, dtype, value) / pl.tensor.create(shape, dtype=) make fresh arrays.
- elementwise ops keep the first tensor operand's dtype (scalars broadcast).
- alloc_window_buffer(size) in bytes, or (shape, dtype=) = prod(shape) * itemsize.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from tilecc.errors import InterpError
from tilecc.host.runtime.backend import Backend
from tilecc.host.runtime.world import BufferPtr, Window

Args = dict[str, Any]


class OpContext(Protocol):
    """What an op implementation sees of the rank running it."""
    rank: int
    world: Backend
    reference_collectives: bool
    yielded: tuple[Any, ...] | None


class StopWhile(Exception):
    """`pl.cond(c)` with c false: the pl.while_ loop ends."""


def local(ctx: OpContext, value: Any) -> Any:
    return value.local(ctx.world, ctx.rank) if isinstance(value, Window) else value


def _ints(value: Any, what: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in value)
    except TypeError:
        raise InterpError(f"{what} must be a list of integers, got {value!r}") from None


def region(offsets: Any, shape: Any, rank: int, what: str) -> tuple[slice, ...]:
    offs, dims = _ints(offsets, f"{what} offsets"), _ints(shape, f"{what} shape")
    if len(offs) != rank or len(dims) != rank:
        raise InterpError(f"{what}: offsets {list(offs)} and shape {list(dims)} must both have {rank} entries")
    return tuple(slice(o, o + d) for o, d in zip(offs, dims))


def _checked(array: np.ndarray, index: tuple[slice, ...], what: str) -> tuple[slice, ...]:
    for axis, (s, extent) in enumerate(zip(index, array.shape)):
        if s.start < 0 or s.stop > extent:
            raise InterpError(f"{what}: region {s.start}:{s.stop} of axis {axis} is outside extent {extent}")
    return index


# ---------------------------------------------------------------- control and system

def run_cond(ctx: OpContext, a: Args) -> None:
    if not a["cond"]:
        raise StopWhile()


def run_yield(ctx: OpContext, a: Args) -> Any:
    values = tuple(a["values"])
    ctx.yielded = values
    return values[0] if len(values) == 1 else values


def run_world_size(ctx: OpContext, a: Args) -> int:
    return ctx.world.world_size


def run_rank(ctx: OpContext, a: Args) -> int:
    return ctx.rank


def run_nranks(ctx: OpContext, a: Args) -> int:
    return ctx.world.world_size


def run_get_comm_ctx(ctx: OpContext, a: Args) -> Window:
    # pypto's CommCtx is the window's communicator: every window here spans all ranks
    if not isinstance(a["dist_tensor"], Window):
        raise InterpError(f"pld.system.get_comm_ctx needs a window tensor, got {type(a['dist_tensor']).__name__}")
    return a["dist_tensor"]


def get_byte(dtype: np.dtype) -> Callable[[OpContext, Args], int]:
    return lambda ctx, a: dtype.itemsize


# ---------------------------------------------------------------- windows

def run_alloc_window_buffer(ctx: OpContext, a: Args) -> BufferPtr:
    size, dtype = a["size"], a["dtype"]
    if isinstance(size, (list, tuple)):   # pypto's (shape, *, dtype) overload
        if dtype is None:
            raise InterpError("pld.tensor.alloc_window_buffer(shape, ...) needs dtype=")
        size = int(np.prod(_ints(size, "alloc_window_buffer shape"), dtype=np.int64)) * np.dtype(dtype).itemsize
    elif dtype is not None:
        raise InterpError("pld.tensor.alloc_window_buffer(size) is in bytes and takes no dtype=")
    return ctx.world.alloc(ctx.rank, str(a["name"]), int(size))


def run_window(ctx: OpContext, a: Args) -> Window:
    buf = a["buf"]
    if not isinstance(buf, BufferPtr):
        raise InterpError(f"pld.tensor.window needs a window buffer, got {type(buf).__name__}")
    return ctx.world.window(buf, np.dtype(a["dtype"]), _ints(a["shape"], "pld.tensor.window shape"))


# ---------------------------------------------------------------- tiles and tensors

def run_load(ctx: OpContext, a: Args) -> np.ndarray:
    src = np.asarray(local(ctx, a["tensor"]))
    index = region(a["offsets"], a["shapes"], src.ndim, "pl.load")
    return src[_checked(src, index, "pl.load")].copy()


def run_store(ctx: OpContext, a: Args) -> Any:
    dst, tile = local(ctx, a["output_tensor"]), np.asarray(a["tile"])
    index = region(a["offsets"], tile.shape, dst.ndim, "pl.store")
    dst[_checked(dst, index, "pl.store")] = tile
    return a["output_tensor"]


def run_slice(ctx: OpContext, a: Args) -> np.ndarray:
    src = np.asarray(local(ctx, a["tensor"]))
    index = region(a["offset"], a["shape"], src.ndim, "pl.slice")
    return src[_checked(src, index, "pl.slice")].copy()


def run_create(ctx: OpContext, a: Args) -> np.ndarray:
    return np.zeros(_ints(a["shape"], "pl.tensor.create shape"), dtype=np.dtype(a["dtype"]))


def run_full(ctx: OpContext, a: Args) -> np.ndarray:
    return np.full(_ints(a["shape"], "pl.tile.full shape"), a["value"], dtype=np.dtype(a["dtype"]))


def elementwise(fn: Callable[..., Any]) -> Callable[[OpContext, Args], Any]:
    def run(ctx: OpContext, a: Args) -> Any:
        operands = [local(ctx, a["lhs"]), local(ctx, a["rhs"])]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            result = fn(*operands)
        first = next((x for x in operands if isinstance(x, np.ndarray)), None)
        return result.astype(first.dtype) if first is not None else result
    return run
