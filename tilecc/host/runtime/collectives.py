"""Host collectives executed by every rank: mesh allreduce over window buffers.

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
core_num == 1. Target: FP16 or FP32. Ops: Sum, Max, Min, Prod. Only mode "mesh" runs.

`reference_allreduce` computes the same result without a signal: a rendezvous of all ranks
(World.rendezvous) before reading and another before writing back. It runs a program as
written, before SynthesizeAllReduceSignals gives its allreduces their signals, so the
results of the program and of its rewrite can be compared.
"""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpError
from tilecc.host.runtime.world import Window, World

REDUCE_OPS = {"Sum": np.add, "Max": np.maximum, "Min": np.minimum, "Prod": np.multiply}
TARGET_DTYPES = (np.dtype(np.float16), np.dtype(np.float32))


def check_operands(data: Window, op: str, mode: str) -> None:
    if mode != "mesh":
        raise InterpError(f"pld.tensor.allreduce mode={mode!r}: the runtime executes mode 'mesh' only")
    if op not in REDUCE_OPS:
        raise InterpError(f"pld.tensor.allreduce op {op!r} is not one of {sorted(REDUCE_OPS)}")
    if data.dtype not in TARGET_DTYPES:
        raise InterpError(f"pld.tensor.allreduce target must be FP16 or FP32, got {data.dtype}")


def check_allreduce(world: World, data: Window, signal: Window, op: str, mode: str, core_num: int) -> int:
    """Validate operands; returns the number of lanes of the signal."""
    check_operands(data, op, mode)
    if signal.dtype != np.dtype(np.int32):
        raise InterpError(f"pld.tensor.allreduce signal must be INT32, got {signal.dtype}")
    if core_num < 1:
        raise InterpError(f"pld.tensor.allreduce core_num must be positive, got {core_num}")
    shape = signal.shape
    if len(shape) == 1 and shape[0] == world.world_size and core_num == 1:
        return 1
    if len(shape) == 2 and shape[0] == world.world_size and shape[1] >= core_num:
        return shape[1]
    raise InterpError(f"pld.tensor.allreduce signal shape {list(shape)} does not fit world size "
                      f"{world.world_size} and core_num={core_num} (expected [world_size, lanes >= core_num])")


def reduce_in_rank_order(world: World, data: Window, op: str, lo: int, hi: int) -> np.ndarray:
    """Elements lo:hi of every rank's copy of `data` combined in rank order 0..N-1, in fp32."""
    combine = REDUCE_OPS[op]
    acc = data.local(world, 0).reshape(-1)[lo:hi].astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):   # IEEE results: +-inf, NaN
        for source in range(1, world.world_size):
            acc = combine(acc, data.local(world, source).reshape(-1)[lo:hi].astype(np.float32))
    return acc


def reference_allreduce(world: World, rank: int, data: Window, op: str = "Sum", mode: str = "mesh") -> Window:
    """The allreduce of `data` with rendezvous instead of a signal (every rank calls this)."""
    check_operands(data, op, mode)
    world.rendezvous(rank, "an allreduce (publish)")
    mine = data.local(world, rank).reshape(-1)
    acc = reduce_in_rank_order(world, data, op, 0, mine.size)
    world.rendezvous(rank, "an allreduce (read)")
    with np.errstate(over="ignore"):
        mine[:] = acc.astype(data.dtype)
    return data


def allreduce(world: World, rank: int, data: Window, signal: Window, op: str = "Sum",
              mode: str = "mesh", core_num: int = 1) -> Window:
    """Reduce `data` across all ranks in place (every rank calls this); returns `data`."""
    check_allreduce(world, data, signal, op, mode, core_num)
    peers = [p for p in range(world.world_size) if p != rank]
    mine = data.local(world, rank).reshape(-1)
    for lane, part in enumerate(np.array_split(np.arange(mine.size), core_num)):
        def cell(source: int) -> tuple[int, ...]:
            return (source, lane) if len(signal.shape) == 2 else (source,)

        for peer in peers:
            world.notify(peer, signal, cell(rank), 1)
        world.wait_at_least(rank, signal, [cell(p) for p in peers], 1)
        lo, hi = (int(part[0]), int(part[-1]) + 1) if part.size else (0, 0)
        acc = reduce_in_rank_order(world, data, op, lo, hi)
        for peer in peers:
            world.notify(peer, signal, cell(rank), 1)
        world.wait_at_least(rank, signal, [cell(p) for p in peers], 2)
        with np.errstate(over="ignore"):   # fp32 -> fp16 overflow is +-inf, as the hardware cast
            mine[lo:hi] = acc.astype(data.dtype)
        for peer in peers:
            world.notify(rank, signal, cell(peer), -2)
    return data
