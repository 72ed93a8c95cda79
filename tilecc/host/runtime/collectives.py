"""Host allreduce executed by every rank over window buffers: mesh and ring modes.

Contract (reference/pld.md, "Why reusing one signal is safe"): `allreduce` is called by
every rank with its own copy of the same data window and signal window. Per lane (core):
1. publish: the rank's data is in its window; it adds +1 (atomically) to cell [me, lane]
   of every peer's signal and waits until its own cells [p, lane] reach 1;
2. reduce: it reads every rank's slice of the lane, in rank order 0..N-1 (so all ranks
   compute bit-identical results), accumulating in fp32;
3. done reading: +1 to every peer again and wait for 2, so no peer still reads the
   window when the result is written back in place;
4. credit epilogue: subtract the 2 credits received from each peer, leaving the signal
   all zero, which is what makes one signal reusable back to back and in loops.
Signal: INT32, shape [world_size, lanes] with lanes >= core_num, or [world_size] when
core_num == 1. Target: FP16 or FP32. Ops: Sum, Max, Min, Prod.

Ring mode (pypto's host builtin allreduce_ring): core_num 1, Sum, FP32, 2..16 ranks, the
element count a multiple of the world size (N chunks). Signal [rows, cols] with
rows >= 2 * (N - 1) and cols >= N: round k synchronises on row k (+1 to cell [k, me] of
every peer, wait for cells [k, p] >= 1). Reduce-scatter, steps s = 1..N-1: rank m adds
its left neighbour's chunk (m - s - 1) mod N into its own (`mine + received`), so rank m
ends with the full sum of chunk m; all-gather, steps s = 1..N-1: rank m copies chunk
(m - s) mod N from its left neighbour. A final barrier (on row 2 * (N - 1) when the signal
has it, as pypto's [2 * (N - 1) + 1, N] host signal does, else again on row 0) and an
epilogue subtracting every credit received leave the signal all zero. Chunk c is summed
in the ring's order ((v[c+1] + v[c+2]) + ...) + v[c], the same on every rank.

`reference_allreduce` computes the same result without a signal: a rendezvous of all ranks
(World.rendezvous) before reading and another before writing back. It runs a program as
written, before SynthesizeAllReduceSignals gives its allreduces their signals, so the
results of the program and of its rewrite can be compared.
"""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpError
from tilecc.host.runtime.backend import Backend
from tilecc.host.runtime.world import Window

REDUCE_OPS = {"Sum": np.add, "Max": np.maximum, "Min": np.minimum, "Prod": np.multiply}
TARGET_DTYPES = (np.dtype(np.float16), np.dtype(np.float32))
MODES = ("mesh", "ring")
RING_MAX_RANKS = 16
REDUCE_CHUNK = 1 << 18   # elements a rank reduces at a time (1 MiB of fp32)


def check_operands(data: Window, op: str, mode: str) -> None:
    if mode not in MODES:
        raise InterpError(f"pld.tensor.allreduce mode={mode!r} is not one of {list(MODES)}")
    if op not in REDUCE_OPS:
        raise InterpError(f"pld.tensor.allreduce op {op!r} is not one of {sorted(REDUCE_OPS)}")
    if data.dtype not in TARGET_DTYPES:
        raise InterpError(f"pld.tensor.allreduce target must be FP16 or FP32, got {data.dtype}")


def check_allreduce(world: Backend, data: Window, signal: Window, op: str, mode: str, core_num: int) -> int:
    """Validate operands; returns the number of lanes of the signal."""
    check_operands(data, op, mode)
    if signal.dtype != np.dtype(np.int32):
        raise InterpError(f"pld.tensor.allreduce signal must be INT32, got {signal.dtype}")
    if core_num < 1:
        raise InterpError(f"pld.tensor.allreduce core_num must be positive, got {core_num}")
    shape = signal.shape
    if len(shape) == 1 and shape[0] >= world.world_size and core_num == 1:   # longer: as pypto lowers it
        return 1
    if len(shape) == 2 and shape[0] == world.world_size and shape[1] >= core_num:
        return shape[1]
    raise InterpError(f"pld.tensor.allreduce signal shape {list(shape)} does not fit world size "
                      f"{world.world_size} and core_num={core_num} (expected [world_size, lanes >= core_num])")


def reduce_in_rank_order(world: Backend, rank: int, data: Window, op: str, lo: int, hi: int) -> np.ndarray:
    """Elements lo:hi of every rank's copy of `data` combined in rank order 0..N-1, in fp32:
    ((v0 + v1) + v2) + ... (`dtype=float32`: an fp16 operand widens exactly first)."""
    combine = REDUCE_OPS[op]
    acc = np.empty(max(hi - lo, 0), np.float32)
    # chunk by chunk (elementwise, so the bits do not change): peers' data is fetched in
    # pieces that stay in cache and reuse the backend's buffers instead of faulting in pages
    with np.errstate(over="ignore", invalid="ignore"):   # IEEE results: +-inf, NaN
        for start in range(lo, hi, REDUCE_CHUNK):
            stop = min(start + REDUCE_CHUNK, hi)
            part = acc[start - lo:stop - lo]
            first, *others = world.read_all(data, rank, start, stop)
            if not others:
                part[:] = first
                continue
            combine(first, others[0], out=part, dtype=np.float32)
            for other in others[1:]:
                combine(part, other, out=part, dtype=np.float32)   # in place: no temporary per peer
    return acc


def lane_bounds(elements: int, lanes: int) -> list[tuple[int, int]]:
    """np.array_split's parts of range(elements) into `lanes`, as (lo, hi) pairs: the first
    elements % lanes parts have one element more."""
    base, extra = divmod(elements, lanes)
    bounds, lo = [], 0
    for lane in range(lanes):
        hi = lo + base + (lane < extra)
        bounds.append((lo, hi))
        lo = hi
    return bounds


def reference_allreduce(world: Backend, rank: int, data: Window, op: str = "Sum", mode: str = "mesh") -> Window:
    """The allreduce of `data` with rendezvous instead of a signal (every rank calls this)."""
    check_operands(data, op, mode)
    world.rendezvous(rank, "an allreduce (publish)")
    mine = data.local(world, rank).reshape(-1)
    acc = reduce_in_rank_order(world, rank, data, op, 0, mine.size)
    world.rendezvous(rank, "an allreduce (read)")
    with np.errstate(over="ignore", invalid="ignore"):
        mine[:] = acc
    return data


def allreduce(world: Backend, rank: int, data: Window, signal: Window, op: str = "Sum",
              mode: str = "mesh", core_num: int = 1) -> Window:
    """Reduce `data` across all ranks in place (every rank calls this); returns `data`."""
    if mode == "ring":
        return ring_allreduce(world, rank, data, signal, op, core_num)
    check_allreduce(world, data, signal, op, mode, core_num)
    peers = [p for p in range(world.world_size) if p != rank]
    mine = data.local(world, rank).reshape(-1)
    for lane, (lo, hi) in enumerate(lane_bounds(mine.size, core_num)):
        def cell(source: int) -> tuple[int, ...]:
            return (source, lane) if len(signal.shape) == 2 else (source,)

        for peer in peers:
            world.notify(peer, signal, cell(rank), 1)
        world.wait_at_least(rank, signal, [cell(p) for p in peers], 1)
        acc = reduce_in_rank_order(world, rank, data, op, lo, hi)
        for peer in peers:
            world.notify(peer, signal, cell(rank), 1)
        world.wait_at_least(rank, signal, [cell(p) for p in peers], 2)
        with np.errstate(over="ignore", invalid="ignore"):   # fp32 -> fp16 overflow is +-inf, as the hardware cast
            mine[lo:hi] = acc   # the cast in the assignment: no fp32 temporary of the lane
        for peer in peers:
            world.notify(rank, signal, cell(peer), -2)
    return data


def check_ring(world: Backend, data: Window, signal: Window, op: str, core_num: int) -> tuple[int, int]:
    """Validate a ring allreduce; returns (signal rows, signal columns)."""
    n = world.world_size
    if core_num != 1:
        raise InterpError(f"pld.tensor.allreduce mode='ring' requires core_num == 1, got {core_num}")
    if op != "Sum":
        raise InterpError(f"pld.tensor.allreduce mode='ring' supports op Sum only, got {op}")
    if data.dtype != np.dtype(np.float32):
        raise InterpError(f"pld.tensor.allreduce mode='ring' target must be FP32, got {data.dtype}")
    if n > RING_MAX_RANKS:
        raise InterpError(f"pld.tensor.allreduce mode='ring' runs on at most {RING_MAX_RANKS} ranks, got {n}")
    if signal.dtype != np.dtype(np.int32):
        raise InterpError(f"pld.tensor.allreduce signal must be INT32, got {signal.dtype}")
    rows, cols = (signal.shape[0], signal.shape[1]) if len(signal.shape) == 2 else (1, signal.size)
    if len(signal.shape) != 2 or rows < 2 * (n - 1) or cols < n:
        raise InterpError(f"pld.tensor.allreduce mode='ring' signal shape {list(signal.shape)} does not fit "
                          f"world size {n} (expected [2 * (NR - 1) = {2 * (n - 1)} rows or more, >= {n} columns])")
    if data.size % n:
        raise InterpError(f"pld.tensor.allreduce mode='ring' needs an element count divisible by the world "
                          f"size: {data.size} elements on {n} ranks")
    return rows, cols


def _round_barrier(world: Backend, rank: int, signal: Window, row: int, count: int) -> None:
    peers = [p for p in range(world.world_size) if p != rank]
    for peer in peers:
        world.notify(peer, signal, (row, rank), 1)
    world.wait_at_least(rank, signal, [(row, p) for p in peers], count)


def ring_allreduce(world: Backend, rank: int, data: Window, signal: Window, op: str = "Sum",
                   core_num: int = 1) -> Window:
    """The ring schedule of the module docstring; every rank calls this. Returns `data`."""
    rows, _ = check_ring(world, data, signal, op, core_num)
    n = world.world_size
    if n == 1:
        return data
    chunk = data.size // n
    mine = data.local(world, rank).reshape(-1)
    left = (rank - 1) % n
    round_ = 0
    for step in range(1, n):
        _round_barrier(world, rank, signal, round_, 1)
        round_ += 1
        c = (rank - step - 1) % n
        received = world.read(data, rank, left, c * chunk, (c + 1) * chunk)
        with np.errstate(over="ignore", invalid="ignore"):
            mine[c * chunk:(c + 1) * chunk] = mine[c * chunk:(c + 1) * chunk] + received
    for step in range(1, n):
        _round_barrier(world, rank, signal, round_, 1)
        round_ += 1
        c = (rank - step) % n
        mine[c * chunk:(c + 1) * chunk] = world.read(data, rank, left, c * chunk, (c + 1) * chunk)
    final = round_ if rows > round_ else 0
    _round_barrier(world, rank, signal, final, 2 if final == 0 else 1)
    used = list(range(round_)) + ([final] if final else [])
    for row in used:
        credits = 2 if row == 0 and final == 0 else 1
        for peer in range(n):
            if peer != rank:
                world.notify(rank, signal, (row, peer), -credits)
    return data
