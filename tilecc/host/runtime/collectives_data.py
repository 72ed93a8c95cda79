"""The other host collectives of pypto's pld.tensor: barrier, broadcast, allgather,
reduce_scatter, all_to_all, all_to_all_v (docs/en/user/distributed/01-collectives.md and
python/pypto/language/distributed/op/tensor_ops.py of hw-native-sys/pypto).

Contract: every rank calls the same collective with the same shapes; each is written once
against the Backend interface (backend.py), so it runs on threads and on MPI alike.
Synchronisation is the credit barrier of collectives.py: +1 to cell [me] of every peer's
signal, wait for the own cells [p] to reach the round's count, and at the end subtract
every credit received, so a signal is all zero after each call and reusable back to back.
Signal: INT32 [world_size] or [world_size, 1] (one cell per rank).
- barrier(signal): one round. Returns the signal.
- broadcast(target, signal, root=): round 1 (root has staged), every other rank copies
  root's target, round 2 (nobody reads root any more). Returns target.
- allgather(local, target [NR, S], signal): push local ([1, S] or [S]) into row `me` of
  every rank's target, then one round. local and target must be different buffers.
- reduce_scatter(target [NR, S], signal, op=Sum): round 1 (all staged), rank m sums row m
  of every rank in rank order 0..N-1 into its own row m, round 2. Sum only (pypto
  reserves the others).
- all_to_all(input [NR, S], target [NR, S], signal): push input[d] into row `me` of rank
  d's target, one round.
- all_to_all_v(input [NR*M, S], target [NR*M, S], signal, send_counts [NR], recv_counts
  [NR, 1]): push rows d*M..d*M+M-1 into rows me*M.. of rank d and store
  min(send_counts[d], M) into rank d's recv_counts[me, 0]; one round. M = target rows / NR.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tilecc.errors import InterpError
from tilecc.host.runtime.backend import Backend
from tilecc.host.runtime.world import Window


def _cell(signal: Window, source: int) -> tuple[int, ...]:
    return (source,) if len(signal.shape) == 1 else (source, 0)


def check_signal(world: Backend, signal: Any, op: str) -> Window:
    if not isinstance(signal, Window):
        raise InterpError(f"{op} needs a window signal (pld.tensor.window), got {type(signal).__name__}")
    if signal.dtype != np.dtype(np.int32):
        raise InterpError(f"{op} signal must be INT32, got {signal.dtype}")
    n = world.world_size
    if signal.shape not in ((n,), (n, 1)):
        raise InterpError(f"{op} signal shape {list(signal.shape)} does not fit world size {n} "
                          f"(expected [{n}] or [{n}, 1])")
    return signal


def _window(value: Any, op: str, what: str) -> Window:
    if not isinstance(value, Window):
        raise InterpError(f"{op} {what} must be a window tensor (pld.tensor.window), got {type(value).__name__}")
    return value


def _rows(window: Window, world: Backend, op: str, what: str, rows: int) -> int:
    """The row length of a [rows, S] window (flat elements per row)."""
    if not window.shape or window.shape[0] != rows:
        raise InterpError(f"{op} {what} shape {list(window.shape)} must have {rows} rows (one per rank"
                          f"{'' if rows == world.world_size else ' block row'})")
    return window.size // rows


def credit_round(world: Backend, rank: int, signal: Window, count: int) -> None:
    peers = [p for p in range(world.world_size) if p != rank]
    for peer in peers:
        world.notify(peer, signal, _cell(signal, rank), 1)
    world.wait_at_least(rank, signal, [_cell(signal, p) for p in peers], count)


def clear_credits(world: Backend, rank: int, signal: Window, count: int) -> None:
    for peer in range(world.world_size):
        if peer != rank:
            world.notify(rank, signal, _cell(signal, peer), -count)


def _local_flat(world: Backend, rank: int, value: Any) -> np.ndarray:
    array = value.local(world, rank) if isinstance(value, Window) else np.asarray(value)
    return array.reshape(-1)


def barrier(world: Backend, rank: int, signal: Any) -> Window:
    sig = check_signal(world, signal, "pld.tensor.barrier")
    credit_round(world, rank, sig, 1)
    clear_credits(world, rank, sig, 1)
    return sig


def broadcast(world: Backend, rank: int, target: Any, signal: Any, root: int) -> Window:
    op = "pld.tensor.broadcast"
    data, sig = _window(target, op, "target"), check_signal(world, signal, op)
    if not 0 <= root < world.world_size:
        raise InterpError(f"{op} root={root} is not a rank of a world of {world.world_size}")
    credit_round(world, rank, sig, 1)
    if rank != root:
        data.local(world, rank).reshape(-1)[:] = world.read(data, rank, root, 0, data.size)
    credit_round(world, rank, sig, 2)
    clear_credits(world, rank, sig, 2)
    return data


def allgather(world: Backend, rank: int, local: Any, target: Any, signal: Any) -> Window:
    op = "pld.tensor.allgather"
    data, sig = _window(target, op, "target"), check_signal(world, signal, op)
    if isinstance(local, Window) and local.buffer == data.buffer:
        raise InterpError(f"{op}: local_data and target must be different window buffers")
    width = _rows(data, world, op, "target", world.world_size)
    chunk = _local_flat(world, rank, local)
    if chunk.size != width:
        raise InterpError(f"{op} local_data has {chunk.size} elements, a target row has {width}")
    chunk = chunk.astype(data.dtype).copy()
    for peer in range(world.world_size):
        world.write(data, rank, peer, rank * width, chunk)
    credit_round(world, rank, sig, 1)
    clear_credits(world, rank, sig, 1)
    return data


def reduce_scatter(world: Backend, rank: int, target: Any, signal: Any, op: str = "Sum") -> Window:
    name = "pld.tensor.reduce_scatter"
    data, sig = _window(target, name, "target"), check_signal(world, signal, name)
    if op != "Sum":
        raise InterpError(f"{name} supports op Sum only (pypto reserves {op}), got {op}")
    width = _rows(data, world, name, "target", world.world_size)
    credit_round(world, rank, sig, 1)
    lo, hi = rank * width, (rank + 1) * width
    acc = world.read(data, rank, 0, lo, hi).copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for source in range(1, world.world_size):
            acc = acc + world.read(data, rank, source, lo, hi)
    credit_round(world, rank, sig, 2)
    data.local(world, rank).reshape(-1)[lo:hi] = acc.astype(data.dtype)
    clear_credits(world, rank, sig, 2)
    return data


def all_to_all(world: Backend, rank: int, input: Any, target: Any, signal: Any) -> Window:
    op = "pld.tensor.all_to_all"
    data, sig = _window(target, op, "target"), check_signal(world, signal, op)
    if isinstance(input, Window) and input.buffer == data.buffer:
        raise InterpError(f"{op}: input and target must be different window buffers")
    n = world.world_size
    width = _rows(data, world, op, "target", n)
    source = _local_flat(world, rank, input)
    if source.size != n * width:
        raise InterpError(f"{op} input has {source.size} elements, target {n * width}")
    for dest in range(n):
        world.write(data, rank, dest, rank * width, source[dest * width:(dest + 1) * width].astype(data.dtype))
    credit_round(world, rank, sig, 1)
    clear_credits(world, rank, sig, 1)
    return data


def all_to_all_v(world: Backend, rank: int, input: Any, target: Any, signal: Any, send_counts: Any,
                 recv_counts: Any) -> Window:
    op = "pld.tensor.all_to_all_v"
    data, sig = _window(target, op, "target"), check_signal(world, signal, op)
    counts_win = _window(recv_counts, op, "recv_counts")
    n = world.world_size
    if not data.shape or data.shape[0] % n:
        raise InterpError(f"{op} target shape {list(data.shape)}: rows must be a multiple of {n} ranks")
    capacity = data.shape[0] // n
    width = data.size // data.shape[0]
    if counts_win.dtype != np.dtype(np.int32) or counts_win.shape not in ((n,), (n, 1)):
        raise InterpError(f"{op} recv_counts must be INT32 [{n}, 1], got {counts_win.dtype} {list(counts_win.shape)}")
    source = _local_flat(world, rank, input)
    counts = _local_flat(world, rank, send_counts)
    if source.size != data.size or counts.size != n:
        raise InterpError(f"{op} input must match target ({data.size} elements) and send_counts have {n} entries")
    block = capacity * width
    for dest in range(n):
        world.write(data, rank, dest, rank * block, source[dest * block:(dest + 1) * block].astype(data.dtype))
        world.notify(dest, counts_win, _cell(counts_win, rank), int(min(int(counts[dest]), capacity)), replace=True)
    credit_round(world, rank, sig, 1)
    clear_credits(world, rank, sig, 1)
    return data
