"""Ranks and their window memory: the shared state a host program runs against.

Invariants:
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
- `rendezvous` is a plain barrier of all ranks, outside window memory: the reference
  collective (collectives.py) synchronises with it, never with signal cells.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

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

    def local(self, world: World, rank: int) -> np.ndarray:
        raw = world.buffer_bytes(self.buffer, rank)
        return raw[: self.nbytes].view(self.dtype).reshape(self.shape)


@dataclass(frozen=True, slots=True)
class BufferPtr:
    """The value of `pld.tensor.alloc_window_buffer`: a handle of a logical buffer."""
    buffer: int
    name: str
    nbytes: int


class World:
    def __init__(self, world_size: int, timeout: float = 20.0) -> None:
        if world_size < 1:
            raise InterpError(f"world size must be at least 1, got {world_size}")
        self.world_size = world_size
        self.timeout = timeout
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

    def notify(self, target_rank: int, signal: Window, cell: tuple[int, ...], amount: int) -> None:
        """Atomic add on `cell` of `target_rank`'s copy of `signal`, then wake waiters."""
        with self._cond:
            signal.local(self, target_rank)[cell] += amount
            self._cond.notify_all()

    def wait_at_least(self, rank: int, signal: Window, cells: list[tuple[int, ...]], count: int) -> None:
        """Block until every cell of `rank`'s own signal holds at least `count`."""
        view = signal.local(self, rank)
        with self._cond:
            ok = self._cond.wait_for(
                lambda: self._failure is not None or all(view[c] >= count for c in cells), self.timeout)
            if self._failure is not None:
                raise InterpError(f"rank {rank}: aborted, {self._failure}")
            if not ok:
                raise InterpError(f"rank {rank}: timed out after {self.timeout}s waiting for signal cells "
                                  f"{cells} to reach {count} (values {[int(view[c]) for c in cells]})")

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
