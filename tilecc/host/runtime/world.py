"""Ranks and their window memory on one process: the threaded backend (one thread per rank).

It implements tilecc/host/runtime/backend.py's Backend; the MPI backend (mpi_world.py)
implements the same interface with one process per rank. Invariants:
- Window buffers are symmetric: every rank allocates the same buffers in the same order
  (the host program runs once per rank, SPMD), so the k-th allocation of every rank is one
  logical buffer with one byte array per rank, and a window names (buffer, dtype, shape)
  so any rank can view any peer's copy (remote access).
- Signal cells change only under the world's lock: `notify` adds atomically to a cell of
  some rank's window and wakes waiters; `wait_at_least` blocks until cells reach a count.
  The lock also orders the data a rank wrote before notifying before what a peer reads
  after waking.
- A failure on one rank (`fail`) wakes every waiter, which then raises instead of hanging;
  a wait that outlives `timeout` seconds raises InterpError naming the rank and the cells.
- `read` / `write` / `accumulate` reach any rank's copy of a window (flat element ranges);
  `accumulate` adds under the lock, so concurrent atomic adds into one peer never lose one.
- `jitter` (seconds) delays a random share of the notifies, to shake the ordering of ranks.
- `rendezvous` is a plain barrier of all ranks, outside window memory: the reference
  collective (collectives.py) synchronises with it, never with signal cells.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tilecc.errors import InterpError


@dataclass(frozen=True, slots=True)
class Window:
    """A typed view of one window buffer; `local(world, rank)` is that rank's numpy view."""
    buffer: int
    dtype: np.dtype
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def local(self, world: Backend, rank: int) -> np.ndarray:
        raw = world.buffer_bytes(self.buffer, rank)
        return raw[: self.nbytes].view(self.dtype).reshape(self.shape)


@dataclass(frozen=True, slots=True)
class BufferPtr:
    """The value of `pld.tensor.alloc_window_buffer`: a handle of a logical buffer."""
    buffer: int
    name: str
    nbytes: int


class Jitter:
    """Random delays before a share of the notifies (stress tests: ranks out of step)."""

    def __init__(self, seconds: float, seed: int = 0, share: float = 0.1) -> None:
        self.seconds, self.share = seconds, share
        self._random = random.Random(0x5EED + seed)

    def delay(self) -> None:
        if self.seconds and self._random.random() < self.share:
            time.sleep(self._random.uniform(0, self.seconds))


WAIT_CMP = {"Ge": np.greater_equal, "Eq": np.equal}   # pypto's pld.WaitCmp


def wait_message(rank: int, timeout: float, cells: list[tuple[int, ...]], expected: int, cmp: str,
                 values: list[int]) -> str:
    relation = "reach" if cmp == "Ge" else "equal"
    return (f"rank {rank}: timed out after {timeout}s waiting for signal cells {cells} to {relation} "
            f"{expected} (values {values})")


class World:
    """The threaded backend: every rank's memory in this process, one lock for signal cells."""

    def __init__(self, world_size: int, timeout: float = 20.0, jitter: float = 0.0) -> None:
        if world_size < 1:
            raise InterpError(f"world size must be at least 1, got {world_size}")
        self.world_size = world_size
        self.timeout = timeout
        self.jitter = Jitter(jitter)
        self._cond = threading.Condition()
        # buffers[k][rank]: byte array of the k-th allocation on that rank
        self._buffers: list[list[np.ndarray]] = []
        self._names: list[str] = []
        self._alloc_count = [0] * world_size
        self._failure: str | None = None
        self._barrier = threading.Barrier(world_size)

    # ------------------------------------------------------------ allocation

    def alloc(self, rank: int, name: str, nbytes: int) -> BufferPtr:
        if nbytes < 0:
            raise InterpError(f"rank {rank}: alloc_window_buffer `{name}` of negative size {nbytes}")
        with self._cond:
            index = self._alloc_count[rank]
            self._alloc_count[rank] += 1
            if index == len(self._buffers):
                # the first rank to reach an allocation creates every rank's copy (a symmetric
                # heap), so a peer may signal into it before its owner gets there
                self._buffers.append([np.zeros(nbytes, dtype=np.uint8) for _ in range(self.world_size)])
                self._names.append(name)
            else:
                other = self._buffers[index][0]
                if self._names[index] != name or other.size != nbytes:
                    raise InterpError(
                        f"rank {rank}: window allocation #{index} is `{name}` of {nbytes} bytes but another "
                        f"rank allocated `{self._names[index]}` of {other.size} bytes "
                        "(ranks must allocate symmetrically)")
        return BufferPtr(index, name, nbytes)

    def buffer_bytes(self, buffer: int, rank: int) -> np.ndarray:
        return self._buffers[buffer][rank]

    def buffer_names(self) -> list[str]:
        return list(self._names)

    def buffer_by_name(self, name: str, rank: int) -> np.ndarray:
        """The byte array of the (last) buffer allocated under `name` on `rank`."""
        for index in range(len(self._names) - 1, -1, -1):
            if self._names[index] == name:
                return self._buffers[index][rank]
        raise KeyError(name)

    def window(self, ptr: BufferPtr, dtype: np.dtype, shape: tuple[int, ...]) -> Window:
        win = Window(ptr.buffer, dtype, shape)
        if win.nbytes > ptr.nbytes:
            raise InterpError(f"window {list(shape)} of {dtype} needs {win.nbytes} bytes but buffer "
                              f"`{ptr.name}` has {ptr.nbytes}")
        return win

    # ------------------------------------------------------------ signals

    # ------------------------------------------------------------ remote data

    def read(self, window: Window, rank: int, peer: int, lo: int, hi: int) -> np.ndarray:
        """Elements lo:hi of `peer`'s copy of `window` (flat), as seen by `rank`."""
        return window.local(self, peer).reshape(-1)[lo:hi]

    def read_all(self, window: Window, rank: int, lo: int, hi: int) -> list[np.ndarray]:
        return [self.read(window, rank, peer, lo, hi) for peer in range(self.world_size)]

    def write(self, window: Window, rank: int, peer: int, lo: int, values: np.ndarray) -> None:
        window.local(self, peer).reshape(-1)[lo:lo + values.size] = values.reshape(-1)

    def accumulate(self, window: Window, rank: int, peer: int, lo: int, values: np.ndarray) -> None:
        """Atomic elementwise add of `values` into `peer`'s copy, from element `lo`."""
        with self._cond, np.errstate(over="ignore"):
            flat = window.local(self, peer).reshape(-1)
            flat[lo:lo + values.size] = flat[lo:lo + values.size] + values.reshape(-1).astype(window.dtype)

    # ------------------------------------------------------------ signals

    def notify(self, target_rank: int, signal: Window, cell: tuple[int, ...], amount: int,
               replace: bool = False) -> None:
        """Atomic add (or, with `replace`, store) on `cell` of `target_rank`'s copy of
        `signal`, then wake waiters."""
        self.jitter.delay()
        with self._cond:
            view = signal.local(self, target_rank)
            view[cell] = amount if replace else view[cell] + amount
            self._cond.notify_all()

    def wait_at_least(self, rank: int, signal: Window, cells: list[tuple[int, ...]], count: int) -> None:
        """Block until every cell of `rank`'s own signal holds at least `count`."""
        self.wait_until(rank, signal, cells, count, "Ge")

    def wait_until(self, rank: int, signal: Window, cells: list[tuple[int, ...]], expected: int,
                   cmp: str) -> None:
        """Block until every cell of `rank`'s own signal compares `cmp` (Ge / Eq) to `expected`."""
        view = signal.local(self, rank)
        test = WAIT_CMP[cmp]
        with self._cond:
            ok = self._cond.wait_for(
                lambda: self._failure is not None or all(test(view[c], expected) for c in cells), self.timeout)
            if self._failure is not None:
                raise InterpError(f"rank {rank}: aborted, {self._failure}")
            if not ok:
                raise InterpError(wait_message(rank, self.timeout, cells, expected, cmp,
                                               [int(view[c]) for c in cells]))

    def cell_value(self, signal: Window, rank: int, cell: tuple[int, ...]) -> int:
        with self._cond:
            return int(signal.local(self, rank)[cell])

    def rendezvous(self, rank: int, what: str) -> None:
        """Block until every rank reached a rendezvous (InterpError on failure or timeout)."""
        try:
            self._barrier.wait(self.timeout)
        except threading.BrokenBarrierError:
            with self._cond:
                failure = self._failure
            if failure is not None:
                raise InterpError(f"rank {rank}: aborted, {failure}") from None
            raise InterpError(f"rank {rank}: timed out after {self.timeout}s waiting for every rank "
                              f"to reach {what}") from None

    def fail(self, message: str) -> None:
        with self._cond:
            if self._failure is None:
                self._failure = message
            self._cond.notify_all()
        self._barrier.abort()


if TYPE_CHECKING:
    from tilecc.host.runtime.backend import Backend
