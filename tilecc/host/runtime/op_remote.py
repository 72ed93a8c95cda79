"""Runtime implementations of the cross-rank pl / pld ops (the `run` column of
tilecc/host/ops.py): collectives and one-sided access to a peer's window.

Contract (pypto's python/pypto/language/distributed/op, docs/en/user/distributed/02-primitives.md):
- pld.system.notify(target, peer, offsets, value, *, op): NotifyOp AtomicAdd adds
  `value` to the peer's cell `offsets` of `target`, Set stores it.
- pld.system.wait(signal, offsets, expected, *, cmp): blocks until the rank's own cell
  compares Ge / Eq to `expected`; it never resets the cell (these are monotonic).
- pld.tensor.put(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, *,
  atomic): copies a region of the local `src` (a window or tensor) into the peer's `dst`
  (the whole of src at offset 0 by default); AtomicType Add accumulates instead.
  pld.tensor.get(dst, peer, src, ...) copies the peer's `src` region into the local dst.
- pld.tile.remote_load(target, peer, offsets, shape): a tile read from the peer's window;
  pld.tile.remote_store(src_tile, target, peer, offsets, *, atomic): writes one into it.
- Collectives: collectives.py (allreduce) and collectives_data.py (the others).
Regions are row-major boxes; a box becomes one flat range per row (last dimension).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from tilecc.errors import InterpError
from tilecc.host.runtime import collectives, collectives_data
from tilecc.host.runtime.op_local import Args, OpContext, local, region
from tilecc.host.runtime.world import Window

NOTIFY_OPS = ("AtomicAdd", "Set")
WAIT_CMPS = ("Eq", "Ge")
ATOMIC_TYPES = ("None_", "Add")


def _window(value: Any, op: str, what: str) -> Window:
    if not isinstance(value, Window):
        raise InterpError(f"{op} {what} must be a window tensor (pld.tensor.window), got {type(value).__name__}")
    return value


def _peer(ctx: OpContext, value: Any, op: str) -> int:
    peer = int(value)
    if not 0 <= peer < ctx.world.world_size:
        raise InterpError(f"rank {ctx.rank}: {op} peer {peer} is not a rank of a world of {ctx.world.world_size}")
    return peer


def _cell(signal: Window, offsets: Any, op: str) -> tuple[int, ...]:
    cell = tuple(int(o) for o in offsets)
    if len(cell) != len(signal.shape) or not all(0 <= c < d for c, d in zip(cell, signal.shape)):
        raise InterpError(f"{op} offsets {list(cell)} are not a cell of signal {list(signal.shape)}")
    return cell


def _rows(shape: tuple[int, ...], index: tuple[slice, ...]) -> Iterator[tuple[int, int]]:
    """(flat start, length) of every row of the box `index` in an array of `shape`."""
    strides = [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]
    outer = [range(s.start, s.stop) for s in index[:-1]]
    last = index[-1] if index else slice(0, 1)
    for point in np.ndindex(*[len(r) for r in outer]) if outer else [()]:
        base = sum((outer[i][p]) * strides[i] for i, p in enumerate(point))
        yield base + last.start, last.stop - last.start


def _box(shape: tuple[int, ...], offsets: Any, extent: Any, op: str) -> tuple[slice, ...]:
    index = region(offsets, extent, len(shape), op)
    for axis, (s, dim) in enumerate(zip(index, shape)):
        if s.start < 0 or s.stop > dim:
            raise InterpError(f"{op}: region {s.start}:{s.stop} of axis {axis} is outside extent {dim}")
    return index


def _atomic(value: Any, op: str) -> bool:
    name = str(value).rsplit(".", 1)[-1]
    if name not in ATOMIC_TYPES:
        raise InterpError(f"{op} atomic={name} is not one of {list(ATOMIC_TYPES)}")
    return name == "Add"


def write_box(ctx: OpContext, dst: Window, peer: int, index: tuple[slice, ...], values: np.ndarray,
              add: bool) -> None:
    flat = values.astype(dst.dtype).reshape(-1)
    taken = 0
    for start, length in _rows(dst.shape, index):
        piece = flat[taken:taken + length]
        if add:
            ctx.world.accumulate(dst, ctx.rank, peer, start, piece)
        else:
            ctx.world.write(dst, ctx.rank, peer, start, piece)
        taken += length


def read_box(ctx: OpContext, src: Window, peer: int, index: tuple[slice, ...]) -> np.ndarray:
    parts = [ctx.world.read(src, ctx.rank, peer, start, start + length) for start, length in _rows(src.shape, index)]
    return np.concatenate(parts).reshape([s.stop - s.start for s in index]) if parts else np.zeros(0, src.dtype)


def run_notify(ctx: OpContext, a: Args) -> None:
    op = "pld.system.notify"
    signal, peer = _window(a["target"], op, "target"), _peer(ctx, a["peer"], op)
    mode = str(a["op"]).rsplit(".", 1)[-1]
    if mode not in NOTIFY_OPS:
        raise InterpError(f"{op} op={mode} is not one of {list(NOTIFY_OPS)}")
    ctx.world.notify(peer, signal, _cell(signal, a["offsets"], op), int(a["value"]), replace=mode == "Set")


def run_wait(ctx: OpContext, a: Args) -> None:
    op = "pld.system.wait"
    signal = _window(a["signal"], op, "signal")
    cmp = str(a["cmp"]).rsplit(".", 1)[-1]
    if cmp not in WAIT_CMPS:
        raise InterpError(f"{op} cmp={cmp} is not one of {list(WAIT_CMPS)}")
    ctx.world.wait_until(ctx.rank, signal, [_cell(signal, a["offsets"], op)], int(a["expected"]), cmp)


def run_put(ctx: OpContext, a: Args) -> Window:
    op = "pld.tensor.put"
    dst, peer = _window(a["dst"], op, "dst"), _peer(ctx, a["peer"], op)
    src = np.asarray(local(ctx, a["src"]))
    extent = a["shape"] if a["shape"] is not None else src.shape
    src_box = _box(src.shape, a["src_offsets"] or [0] * src.ndim, extent, op + " src")
    dst_box = _box(dst.shape, a["dst_offsets"] or [0] * len(dst.shape), _fit(extent, len(dst.shape)), op + " dst")
    write_box(ctx, dst, peer, dst_box, src[src_box], _atomic(a["atomic"], op))
    return dst


def run_get(ctx: OpContext, a: Args) -> Any:
    op = "pld.tensor.get"
    src, peer = _window(a["src"], op, "src"), _peer(ctx, a["peer"], op)
    dst = local(ctx, a["dst"])
    extent = a["shape"] if a["shape"] is not None else src.shape
    values = read_box(ctx, src, peer, _box(src.shape, a["src_offsets"] or [0] * len(src.shape), extent, op + " src"))
    dst_box = _box(dst.shape, a["dst_offsets"] or [0] * dst.ndim, _fit(extent, dst.ndim), op + " dst")
    dst[dst_box] = values.reshape([s.stop - s.start for s in dst_box])
    return a["dst"]


def _fit(extent: Any, rank: int) -> list[int]:
    """An extent for an array of `rank` dimensions: leading 1s added or dropped."""
    dims = [int(d) for d in extent]
    while len(dims) > rank and dims[0] == 1:
        dims.pop(0)
    return [1] * (rank - len(dims)) + dims


def run_remote_load(ctx: OpContext, a: Args) -> np.ndarray:
    op = "pld.tile.remote_load"
    target, peer = _window(a["target"], op, "target"), _peer(ctx, a["peer"], op)
    return read_box(ctx, target, peer, _box(target.shape, a["offsets"], a["shape"], op))


def run_remote_store(ctx: OpContext, a: Args) -> None:
    op = "pld.tile.remote_store"
    target, peer = _window(a["target"], op, "target"), _peer(ctx, a["peer"], op)
    tile = np.asarray(local(ctx, a["src_tile"]))
    write_box(ctx, target, peer, _box(target.shape, a["offsets"], _fit(tile.shape, len(target.shape)), op),
              tile, _atomic(a["atomic"], op))


def run_allreduce(ctx: OpContext, a: Args) -> Window:
    op = "pld.tensor.allreduce"
    data, signal = a["target"], a["signal"]
    if signal is None and ctx.reference_collectives:
        return collectives.reference_allreduce(ctx.world, ctx.rank, _window(data, op, "target"),
                                               a["op"], a["mode"])
    if signal is None:
        raise InterpError("pld.tensor.allreduce without a signal cannot run: run the "
                          "synthesize-allreduce-signals pass first (tilecc host-opt)")
    if not isinstance(data, Window) or not isinstance(signal, Window):
        raise InterpError("pld.tensor.allreduce needs window tensors (pld.tensor.window) for data and signal")
    return collectives.allreduce(ctx.world, ctx.rank, data, signal, a["op"], a["mode"], int(a["core_num"]))


def run_barrier(ctx: OpContext, a: Args) -> Window:
    return collectives_data.barrier(ctx.world, ctx.rank, a["signal"])


def run_broadcast(ctx: OpContext, a: Args) -> Window:
    return collectives_data.broadcast(ctx.world, ctx.rank, a["target"], a["signal"], int(a["root"]))


def run_allgather(ctx: OpContext, a: Args) -> Window:
    return collectives_data.allgather(ctx.world, ctx.rank, a["local_data"], a["target"], a["signal"])


def run_reduce_scatter(ctx: OpContext, a: Args) -> Window:
    return collectives_data.reduce_scatter(ctx.world, ctx.rank, a["target"], a["signal"], a["op"])


def run_all_to_all(ctx: OpContext, a: Args) -> Window:
    return collectives_data.all_to_all(ctx.world, ctx.rank, a["input"], a["target"], a["signal"])


def run_all_to_all_v(ctx: OpContext, a: Args) -> Window:
    return collectives_data.all_to_all_v(ctx.world, ctx.rank, a["input"], a["target"], a["signal"],
                                         a["send_counts"], a["recv_counts"])
