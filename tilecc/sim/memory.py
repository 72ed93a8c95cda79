"""The simulated machine's memories: SBUF, PSUM and HBM tensors, where each location lives.

Invariants:
- SBUF is 128 partitions x 192 KiB (0x30000 bytes) and PSUM 128 x 16 KiB of bytes; every
  SB / PSUM MemoryLocation of a program is placed at partition 0 and a column (byte) range
  of every partition: its own (a bump allocator, 64-byte aligned), or one given by the
  caller that locations living at other times share (sim/placement.py); PSUM locations
  keep to the banks (sim/psum_banks.py); a location that does not fit raises SimError.
  Each memory is one flat numpy byte array stored column-block major: the bytes of
  columns base..end of all 128 partitions are one contiguous [128, end - base] block, so a
  tile is as compact in host memory as a numpy array of its shape (partition rows 192 KiB
  apart would thrash the host's caches and TLB). HBM locations are byte arrays of their
  own, [partitions, bytes_per_partition].
- Every byte has a shadow byte (0xff = defined) in a parallel array (tilecc/definedness.py);
  `generation` is bumped whenever bytes become undefined, so a view found all defined at
  the current generation still is.
- `reset_memory()` is power-on (memory zero and unwritten, nothing placed) without touching
  memory: the big arrays are allocated once, and a location placed on bytes an earlier run
  used (SB / PSUM columns below the high-water mark; an HBM array given back to its
  location, a fresh 1 MB one costing its page faults, ~0.6 ms) is stale: it reads as zero
  and unwritten, and the machine clears it (data and shadow) when an instruction first
  touches it, unless that first touch writes every one of its bytes, which overwrites
  both anyway (Machine.view `whole`). `settle` clears one for a caller that reads or
  writes its bytes directly. Locations that share columns (a given `base`) are cleared
  when placed: a later tenant sees what an earlier one left, not stale bytes.
- A borrowed HBM location (`place(..., borrow=array)`: a kernel input) is a read-only view
  of the caller's array with an all-defined shadow, not a copy, until an instruction
  writes it (`own`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecc.bir.enums import MemoryKind
from tilecc.bir.inst import MemoryLocation
from tilecc.errors import SimError
from tilecc.sim.dtypes import numpy_dtype
from tilecc.sim.psum_banks import bank_start
from tilecc.sim.view_geometry import PARTITIONS

SBUF_BYTES = 0x30000
PSUM_BYTES = 0x4000
ALIGN = 64

# where a location's bytes are: (location, base column, id of the array they belong to)
Layout = tuple[MemoryLocation, int, int]


@dataclass(slots=True)
class Placement:
    """Where a MemoryLocation lives: its byte array, first byte and row geometry."""

    loc: MemoryLocation
    data: np.ndarray  # uint8 [partitions, bytes] of this location alone
    written: np.ndarray  # byte mask like data (0xff = defined)
    base: int  # the location's first column (byte) in every SBUF / PSUM partition
    itemsize: int
    row: int  # elements per partition
    borrowed: np.ndarray | None = None  # the caller's array that `data` views (read-only)


class Memory:
    """SBUF, PSUM and the HBM tensors of one program run, with their shadows."""

    def reset_memory(self) -> None:
        """Power-on: nothing placed, every byte zero and unwritten (stale where an earlier
        run left bytes)."""
        if not hasattr(self, "sbuf"):
            self.sbuf = np.zeros(PARTITIONS * SBUF_BYTES, np.uint8)
            self.psum = np.zeros(PARTITIONS * PSUM_BYTES, np.uint8)
            self.sbuf_written = np.zeros(PARTITIONS * SBUF_BYTES, np.uint8)
            self.psum_written = np.zeros(PARTITIONS * PSUM_BYTES, np.uint8)
            # columns below this may hold bytes of an earlier run (above: still zero)
            self._high_water = {MemoryKind.SB: 0, MemoryKind.PSUM: 0}
            self._all_defined = np.full(0, 0xFF, np.uint8)   # the shadow of borrowed inputs
            self.generation = 0
        # the last run's HBM arrays, by location, for `place` to give back (stale)
        self._hbm_pool = {old.loc: old for old in getattr(self, "placements", {}).values()
                          if old.loc.kind == MemoryKind.HBM and old.borrowed is None}
        self.placements: dict[str, Placement] = {}
        self._stale: set[str] = set()   # placed locations that read as zero but may not be
        self._layout: list[Layout] = []
        # the arrays borrowed inputs view, kept as long as views of them are: ids stay unique
        self._lenders: list[np.ndarray] = []
        self._next_free = {MemoryKind.SB: 0, MemoryKind.PSUM: 0}

    def place(self, loc: MemoryLocation, base: int | None = None, clear: bool = True,
              borrow: np.ndarray | None = None) -> Placement:
        """Give `loc` its bytes (SB / PSUM: the next free column range of every partition,
        or the range from column `base`, which locations living at other times may share:
        sim/placement.py). `clear=False`: an HBM tensor whose every byte and shadow byte
        the caller writes next (a kernel input) may keep the last run's bytes meanwhile.
        `borrow`: a C-contiguous array of HBM tensor `loc`'s bytes (a kernel input) that
        the location reads in place (read-only, all defined) until an instruction writes it
        (`own` copies it then)."""
        if loc.name in self.placements:
            raise SimError(f"memory location {loc.name!r} is declared twice")
        itemsize = numpy_dtype(loc.dtype).itemsize
        row = loc.bytes_per_partition // itemsize
        shape = (loc.partitions, loc.bytes_per_partition)
        owner = 0   # what the views' bytes belong to, when it is not the machine's SB / PSUM
        if borrow is not None:
            data = borrow.reshape(-1).view(np.uint8).reshape(shape)
            data.flags.writeable = False
            placement = Placement(loc, data, self._defined(data.size).reshape(shape), 0,
                                  itemsize, row, borrow)
            owner = id(borrow)   # alive while its views are kept (`_lenders`): ids stay unique
            self._lenders.append(borrow)
        elif loc.kind == MemoryKind.HBM:
            if (reused := self._hbm_pool.pop(loc, None)) is not None:
                data, written = reused.data, reused.written
                if clear:
                    self._stale.add(loc.name)
            else:
                data, written = np.zeros(shape, np.uint8), np.zeros(shape, np.uint8)
            placement = Placement(loc, data, written, 0, itemsize, row)
            owner = id(data)
        else:
            if loc.partitions > PARTITIONS:
                raise SimError(f"memory location {loc.name!r} has {loc.partitions} partitions "
                               f"(at most {PARTITIONS})")
            flat, flat_written, capacity = (
                (self.sbuf, self.sbuf_written, SBUF_BYTES) if loc.kind == MemoryKind.SB
                else (self.psum, self.psum_written, PSUM_BYTES))
            shared = base is not None   # columns other locations may use at other times
            if base is None:
                base = self._next_free[loc.kind]
                if loc.kind == MemoryKind.PSUM:
                    base = bank_start(base, loc.bytes_per_partition)
            end = base + loc.bytes_per_partition
            if end > capacity:
                raise SimError(f"memory location {loc.name!r} ({loc.bytes_per_partition} bytes "
                               f"per partition) does not fit in {loc.kind.name}: bytes "
                               f"{base}..{end - 1} of {capacity}")
            end = -(-end // ALIGN) * ALIGN
            self._next_free[loc.kind] = max(self._next_free[loc.kind], end)
            # columns base..end of all 128 partitions, stored as one [128, bytes] block
            block = slice(PARTITIONS * base, PARTITIONS * (base + loc.bytes_per_partition))
            placement = Placement(loc, flat[block].reshape((PARTITIONS, shape[1])),
                                  flat_written[block].reshape((PARTITIONS, shape[1])), base,
                                  itemsize, row)
            if base < self._high_water[loc.kind]:
                # a later tenant of shared columns sees what an earlier one left: clear now
                if shared:
                    self.clear(placement)
                else:
                    self._stale.add(loc.name)
            self._high_water[loc.kind] = max(self._high_water[loc.kind], end)
        self.placements[loc.name] = placement
        self._layout.append((loc, placement.base, owner))
        return placement

    def settle(self, name: str) -> Placement:
        """Location `name`, its bytes cleared if they are stale: for a caller that reads or
        writes them other than through `view`."""
        if name in self._stale:
            self._stale.discard(name)
            self.clear(self.placements[name])
        return self.placement(name)

    def clear(self, placement: Placement) -> None:
        placement.data.fill(0)
        placement.written.fill(0)
        self.generation += 1   # views found all defined may not be any more

    def _defined(self, size: int) -> np.ndarray:
        """`size` bytes of an all-defined shadow, read-only (shared by borrowed inputs)."""
        if self._all_defined.size < size:
            self._all_defined = np.full(max(size, 2 * self._all_defined.size), 0xFF, np.uint8)
            self._all_defined.flags.writeable = False
        return self._all_defined[:size]

    def own(self, placement: Placement) -> None:
        """A borrowed input is about to be written: copy it into bytes of the machine's own
        (the caller drops the views of the caller's array)."""
        loc = placement.loc
        reused = self._hbm_pool.pop(loc, None)
        data = reused.data if reused is not None else np.empty(placement.data.shape, np.uint8)
        written = reused.written if reused is not None else np.empty_like(data)
        data[...] = placement.data
        written.fill(0xFF)
        placement.data, placement.written, placement.borrowed = data, written, None
        self._layout = [(at, base, id(data) if at is loc else owner)
                        for at, base, owner in self._layout]

    def placement(self, name: str) -> Placement:
        if (placement := self.placements.get(name)) is None:
            raise SimError(f"access to undeclared memory location {name!r}")
        return placement
