"""The MPI backend: every rank is an MPI process, every window buffer an MPI RMA window.

It implements backend.py's Backend for the calling process's rank (`self.rank`); the
peers are the other processes of the communicator. Invariants:
- Window buffers are allocated collectively (MPI_Win_allocate, byte displacement unit) in
  the program's allocation order. Every rank keeps one passive-target epoch open on every
  window (MPI_Win_lock_all) for the window's life, so no access ever needs a global lock.
  Before each allocation the ranks meet in a failure-aware rendezvous, so a collective
  call is only entered when every rank is known to enter it; the (name, size) of the
  allocation is then compared across ranks (the symmetric-heap rule of world.py).
- `notify` is MPI_Accumulate (SUM, or REPLACE for a store) of one INT32 on the peer's cell
  followed by MPI_Win_flush; before it, MPI_Win_sync on every window makes the rank's
  earlier stores to its own window memory visible (the unified memory model's barrier).
- `wait_until` polls the rank's own cells with MPI_Fetch_and_op(NO_OP) (atomic with the
  peers' accumulates, as MPI requires: no plain loads of cells others update atomically),
  then MPI_Win_sync on every window, so data a peer wrote before notifying is visible.
- Remote data: when every process shares one node (MPI_COMM_TYPE_SHARED spans the
  communicator; `direct_reads=False` turns it off), window buffers are allocated with
  MPI_Win_allocate_shared and `read` / `read_all` are loads from the peer's segment
  (MPI_Win_shared_query), the same views the threaded backend gives; the Win_sync pairs
  above are what MPI's unified model asks of such loads. Otherwise `read` is MPI_Get +
  flush and `read_all` issues every peer's Get before one Flush_all. Either way
  `write` is MPI_Put + flush, `accumulate`
  MPI_Accumulate(SUM) + flush for the element types MPI has; FP16 / BF16 add one element
  at a time by compare-and-swap on the aligned 32-bit word that holds it.
- Failure: a control window holds a failure counter and a rendezvous counter (INT64), a
  message window one slot per rank. `fail` writes the message into its slot on every rank,
  then adds 1 to every rank's failure counter; every wait and rendezvous polls the
  counter and raises InterpError("rank r: aborted, <lowest failed rank's message>"). A wait
  that outlives `timeout` raises InterpError naming the rank and the cells, as World does.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from tilecc.errors import InterpError
from tilecc.host.runtime.world import WAIT_CMP, BufferPtr, Jitter, Window, wait_message

MESSAGE_BYTES = 2048   # a failure message longer than this is cut
SPIN_POLLS = 64        # polls between yields before a waiting rank starts to sleep


def mpi() -> Any:
    """mpi4py's MPI module (imported on first use: it initialises MPI)."""
    try:
        from mpi4py import MPI
    except ImportError as err:   # pragma: no cover - the test extra installs it
        raise InterpError(f"the MPI backend needs mpi4py (pip install mpi4py mpich): {err}") from None
    return MPI


def _mpi_type(MPI: Any, dtype: np.dtype) -> Any:
    return {np.dtype(np.float32): MPI.FLOAT, np.dtype(np.float64): MPI.DOUBLE, np.dtype(np.int8): MPI.INT8_T,
            np.dtype(np.int16): MPI.INT16_T, np.dtype(np.int32): MPI.INT32_T, np.dtype(np.int64): MPI.INT64_T,
            np.dtype(np.uint8): MPI.UINT8_T}.get(dtype)


class MpiWorld:
    def __init__(self, timeout: float = 20.0, comm: Any = None, jitter: float = 0.0,
                 direct_reads: bool = True) -> None:
        self.MPI = mpi()
        self.comm = comm if comm is not None else self.MPI.COMM_WORLD
        self.rank: int = self.comm.Get_rank()
        self.world_size: int = self.comm.Get_size()
        node = self.comm.Split_type(self.MPI.COMM_TYPE_SHARED)
        self.direct_reads = direct_reads and node.Get_size() == self.world_size   # one node: loads
        node.Free()
        self._segments: list[list[np.ndarray]] = []   # with direct reads: buffer -> every rank's bytes
        self.timeout = timeout
        self.jitter = Jitter(jitter, seed=self.rank)
        self._windows: list[Any] = []
        self._memory: list[np.ndarray] = []
        self._names: list[str] = []
        self._rendezvous = 0
        self._scratch = np.empty(0, np.uint8)   # read_all's landing buffer, grown on demand
        self._control = self._allocate(16)          # int64 [failures, rendezvous arrivals]
        self._messages = self._allocate(MESSAGE_BYTES * self.world_size)
        self._one64 = np.ones(1, np.int64)

    # ------------------------------------------------------------ windows

    def _allocate(self, nbytes: int, shared: bool = False) -> Any:
        make = self.MPI.Win.Allocate_shared if shared else self.MPI.Win.Allocate
        win = make(max(8, -(-nbytes // 8) * 8), 1, comm=self.comm)
        win.Lock_all()
        np.frombuffer(win.tomemory(), dtype=np.uint8)[:] = 0
        win.Sync()
        self.comm.Barrier()   # every copy is zero before anyone may touch it
        return win

    def alloc(self, rank: int, name: str, nbytes: int) -> BufferPtr:
        if nbytes < 0:
            raise InterpError(f"rank {rank}: alloc_window_buffer `{name}` of negative size {nbytes}")
        self.rendezvous(rank, f"window allocation #{len(self._windows)} (`{name}`)")
        index = len(self._windows)
        win = self._allocate(nbytes, shared=self.direct_reads)
        self._windows.append(win)
        self._memory.append(np.frombuffer(win.tomemory(), dtype=np.uint8)[:nbytes])
        if self.direct_reads:
            self._segments.append([np.frombuffer(win.Shared_query(p)[0], dtype=np.uint8)[:nbytes]
                                   for p in range(self.world_size)])
        self._names.append(name)
        others = self.comm.allgather((name, nbytes))
        if any(other != (name, nbytes) for other in others):
            raise InterpError(f"rank {rank}: window allocation #{index} differs across ranks: "
                              f"{[f'{n} of {b} bytes' for n, b in others]} (ranks must allocate symmetrically)")
        return BufferPtr(index, name, nbytes)

    def window(self, ptr: BufferPtr, dtype: np.dtype, shape: tuple[int, ...]) -> Window:
        win = Window(ptr.buffer, dtype, shape)
        if win.nbytes > ptr.nbytes:
            raise InterpError(f"window {list(shape)} of {dtype} needs {win.nbytes} bytes but buffer "
                              f"`{ptr.name}` has {ptr.nbytes}")
        return win

    def buffer_bytes(self, buffer: int, rank: int) -> np.ndarray:
        if rank != self.rank:
            raise InterpError(f"rank {self.rank} holds only its own window memory, not rank {rank}'s")
        return self._memory[buffer]

    def buffer_names(self) -> list[str]:
        return list(self._names)

    def buffer_by_name(self, name: str, rank: int) -> np.ndarray:
        for index in range(len(self._names) - 1, -1, -1):
            if self._names[index] == name:
                return self.buffer_bytes(index, rank)
        raise KeyError(name)

    def free(self) -> None:
        for win in [*self._windows, self._control, self._messages]:
            win.Unlock_all()
            win.Free()
        self._windows, self._memory, self._segments = [], [], []

    # ------------------------------------------------------------ remote data

    def _sync(self) -> None:
        for win in self._windows:
            win.Sync()

    def read(self, window: Window, rank: int, peer: int, lo: int, hi: int) -> np.ndarray:
        if peer == self.rank:
            return window.local(self, peer).reshape(-1)[lo:hi]
        if self.direct_reads:
            size = window.dtype.itemsize
            return self._segments[window.buffer][peer][lo * size:max(hi, lo) * size].view(window.dtype)
        out = np.empty(max(hi - lo, 0), window.dtype)
        if out.size:
            size = window.dtype.itemsize
            win = self._windows[window.buffer]
            win.Get([out.view(np.uint8), self.MPI.BYTE], peer, target=(lo * size, out.nbytes, self.MPI.BYTE))
            win.Flush(peer)
        return out

    def read_all(self, window: Window, rank: int, lo: int, hi: int) -> list[np.ndarray]:
        """Every rank's elements lo:hi: with direct reads, views of every rank's segment;
        else the own ones are a view of this rank's window, the peers' Gets into one reused
        scratch buffer (valid until the next read_all), all issued, then flushed once, so
        the transfers overlap."""
        count = max(hi - lo, 0)
        size = window.dtype.itemsize
        if self.direct_reads:
            return [segment[lo * size:(lo + count) * size].view(window.dtype)
                    for segment in self._segments[window.buffer]]
        nbytes = count * size
        if self._scratch.size < nbytes * self.world_size:
            self._scratch = np.empty(nbytes * self.world_size, np.uint8)
        win = self._windows[window.buffer]
        out = []
        for peer in range(self.world_size):
            if peer == self.rank:
                out.append(self._memory[window.buffer][lo * size:hi * size].view(window.dtype))
                continue
            into = self._scratch[peer * nbytes:(peer + 1) * nbytes]
            if count:
                win.Get([into, self.MPI.BYTE], peer, target=(lo * size, nbytes, self.MPI.BYTE))
            out.append(into.view(window.dtype))
        if count and self.world_size > 1:
            win.Flush_all()
        return out

    def write(self, window: Window, rank: int, peer: int, lo: int, values: np.ndarray) -> None:
        flat = np.ascontiguousarray(values.reshape(-1), dtype=window.dtype)
        if peer == self.rank:
            window.local(self, peer).reshape(-1)[lo:lo + flat.size] = flat
            return
        if flat.size:
            win = self._windows[window.buffer]
            win.Put([flat.view(np.uint8), self.MPI.BYTE], peer,
                    target=(lo * window.dtype.itemsize, flat.nbytes, self.MPI.BYTE))
            win.Flush(peer)

    def accumulate(self, window: Window, rank: int, peer: int, lo: int, values: np.ndarray) -> None:
        flat = np.ascontiguousarray(values.reshape(-1), dtype=window.dtype)
        win = self._windows[window.buffer]
        size = window.dtype.itemsize
        if (mpi_type := _mpi_type(self.MPI, window.dtype)) is not None:
            if flat.size:
                win.Accumulate([flat, mpi_type], peer, target=(lo * size, flat.size, mpi_type), op=self.MPI.SUM)
                win.Flush(peer)
            return
        if size != 2:
            raise InterpError(f"an atomic add of {window.dtype} elements is not supported")
        for k, value in enumerate(flat):
            self._add_half(win, peer, (lo + k) * size, window.dtype, value)

    def _add_half(self, win: Any, peer: int, offset: int, dtype: np.dtype, value: Any) -> None:
        """Atomic add of one 2-byte float at byte `offset` by compare-and-swap of its word."""
        word_at, half = offset - offset % 4, (offset % 4) // 2
        current, result = np.zeros(1, np.uint32), np.zeros(1, np.uint32)
        win.Fetch_and_op(result, current, peer, target_disp=word_at, op=self.MPI.NO_OP)
        win.Flush(peer)
        while True:
            parts = current.view(dtype).copy()
            with np.errstate(over="ignore", invalid="ignore"):
                parts[half] = (parts[half].astype(np.float32) + np.float32(value)).astype(dtype)
            win.Compare_and_swap(parts.view(np.uint32), current, result, peer, target_disp=word_at)
            win.Flush(peer)
            if result[0] == current[0]:
                return
            current[:] = result

    # ------------------------------------------------------------ signals

    def _cell_disp(self, signal: Window, cell: tuple[int, ...]) -> int:
        return int(np.ravel_multi_index(cell, signal.shape)) * 4 if signal.shape else 0

    def notify(self, target_rank: int, signal: Window, cell: tuple[int, ...], amount: int,
               replace: bool = False) -> None:
        self.jitter.delay()
        self._sync()
        win = self._windows[signal.buffer]
        value = np.array([amount], np.int32)
        win.Accumulate([value, self.MPI.INT32_T], target_rank, target=(self._cell_disp(signal, cell), 1, self.MPI.INT32_T),
                       op=self.MPI.REPLACE if replace else self.MPI.SUM)
        win.Flush(target_rank)

    def cell_value(self, signal: Window, rank: int, cell: tuple[int, ...]) -> int:
        win = self._windows[signal.buffer]
        out = np.zeros(1, np.int32)
        win.Fetch_and_op([np.zeros(1, np.int32), self.MPI.INT32_T], [out, self.MPI.INT32_T], rank,
                         target_disp=self._cell_disp(signal, cell), op=self.MPI.NO_OP)
        win.Flush(rank)
        return int(out[0])

    def wait_at_least(self, rank: int, signal: Window, cells: list[tuple[int, ...]], count: int) -> None:
        self.wait_until(rank, signal, cells, count, "Ge")

    def wait_until(self, rank: int, signal: Window, cells: list[tuple[int, ...]], expected: int,
                   cmp: str) -> None:
        test = WAIT_CMP[cmp]
        self._poll(lambda: all(test(self.cell_value(signal, rank, c), expected) for c in cells),
                   lambda: wait_message(rank, self.timeout, cells, expected, cmp,
                                        [self.cell_value(signal, rank, c) for c in cells]))
        self._sync()

    def _poll(self, ready: Any, timed_out: Any) -> None:
        deadline = time.monotonic() + self.timeout
        polls = 0
        while True:
            self._check_failure()
            if ready():
                return
            if time.monotonic() > deadline:
                raise InterpError(timed_out())
            polls += 1
            if polls < SPIN_POLLS:
                os.sched_yield()
            else:   # a long wait: leave the cores to the ranks doing the work
                time.sleep(min(0.001, 1e-5 * (polls - SPIN_POLLS + 1)))

    def rendezvous(self, rank: int, what: str) -> None:
        self._rendezvous += 1
        target = self._rendezvous * (self.world_size - 1)
        for peer in range(self.world_size):
            if peer != self.rank:
                self._control.Accumulate([self._one64, self.MPI.INT64_T], peer, target=(8, 1, self.MPI.INT64_T),
                                         op=self.MPI.SUM)
                self._control.Flush(peer)
        self._poll(lambda: self._control_value(1) >= target,
                   lambda: f"rank {rank}: timed out after {self.timeout}s waiting for every rank to reach {what}")

    # ------------------------------------------------------------ failure

    def _control_value(self, slot: int) -> int:
        out = np.zeros(1, np.int64)
        self._control.Fetch_and_op([np.zeros(1, np.int64), self.MPI.INT64_T], [out, self.MPI.INT64_T], self.rank,
                                   target_disp=slot * 8, op=self.MPI.NO_OP)
        self._control.Flush(self.rank)
        return int(out[0])

    def failure(self) -> str | None:
        """The message of the lowest-numbered failed rank, if any rank failed."""
        if self._control_value(0) == 0:
            return None
        self._messages.Sync()
        slots = np.frombuffer(self._messages.tomemory(), dtype=np.uint8)
        for source in range(self.world_size):
            raw = bytes(slots[source * MESSAGE_BYTES:(source + 1) * MESSAGE_BYTES]).split(b"\0", 1)[0]
            if raw:
                return raw.decode("utf-8", "replace")
        return None

    def _check_failure(self) -> None:
        if (message := self.failure()) is not None:
            raise InterpError(f"rank {self.rank}: aborted, {message}")

    def fail(self, message: str) -> None:
        raw = message.encode("utf-8")[:MESSAGE_BYTES - 1] + b"\0"
        data = np.frombuffer(raw, dtype=np.uint8).copy()
        for peer in range(self.world_size):
            self._messages.Put([data, self.MPI.BYTE], peer, target=(self.rank * MESSAGE_BYTES, data.size, self.MPI.BYTE))
            self._messages.Flush(peer)
        for peer in range(self.world_size):
            self._control.Accumulate([self._one64, self.MPI.INT64_T], peer, target=(0, 1, self.MPI.INT64_T),
                                     op=self.MPI.SUM)
            self._control.Flush(peer)

