"""The interface a host program's ranks run against: window memory, signals, failure.

Two backends implement it with one semantics: World (world.py; every rank a thread of
this process, the embedded default) and MpiWorld (mpi_world.py; every rank an MPI process,
window buffers MPI RMA windows). Collectives and ops (collectives*.py, op_*.py) are
written once against this Protocol, so they run unchanged on both.

Contract of every backend:
- `alloc` is called by every rank in the same order with the same name and size
  (SPMD); the k-th allocation is one logical buffer with one copy per rank, zero-filled.
- `buffer_bytes(buffer, rank)` is `rank`'s own copy (the MPI backend only has its own).
- `read` / `write` / `accumulate` reach a peer's copy (flat element ranges of a window);
  `read_all` is `read` of every rank's copy, in rank order, fetched together (the
  arrays may be views of window memory or of a buffer the next read_all reuses);
  `accumulate` is atomic per element.
- `notify` is an atomic add (or store, `replace=True`) on one cell of a peer's signal;
  data a rank wrote (locally or by `write`) before a notify is visible to the peer after
  its `wait_until` on that cell returns.
- `wait_until` blocks until all cells of the rank's OWN signal satisfy the comparison,
  raising InterpError on timeout or when another rank failed (`fail`).
- `rendezvous` is a barrier of all ranks outside window memory, failure-aware as well.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from tilecc.host.runtime.world import BufferPtr, Window


class Backend(Protocol):
    world_size: int
    timeout: float

    def alloc(self, rank: int, name: str, nbytes: int) -> BufferPtr: ...

    def window(self, ptr: BufferPtr, dtype: np.dtype, shape: tuple[int, ...]) -> Window: ...

    def buffer_bytes(self, buffer: int, rank: int) -> np.ndarray: ...

    def read(self, window: Window, rank: int, peer: int, lo: int, hi: int) -> np.ndarray: ...

    def read_all(self, window: Window, rank: int, lo: int, hi: int) -> list[np.ndarray]: ...

    def write(self, window: Window, rank: int, peer: int, lo: int, values: np.ndarray) -> None: ...

    def accumulate(self, window: Window, rank: int, peer: int, lo: int, values: np.ndarray) -> None: ...

    def notify(self, target_rank: int, signal: Window, cell: tuple[int, ...], amount: int,
               replace: bool = False) -> None: ...

    def wait_at_least(self, rank: int, signal: Window, cells: list[tuple[int, ...]], count: int) -> None: ...

    def wait_until(self, rank: int, signal: Window, cells: list[tuple[int, ...]], expected: int,
                   cmp: str) -> None: ...

    def cell_value(self, signal: Window, rank: int, cell: tuple[int, ...]) -> int: ...

    def rendezvous(self, rank: int, what: str) -> None: ...

    def fail(self, message: str) -> None: ...
