"""State of the simulated NeuronCore and the access-pattern views into it.

Invariants:
- Memories, placement and stale bytes: sim/memory.py (SBUF 128 x 192 KiB, PSUM 128 x 16
  KiB, HBM tensors of their own; every byte with a shadow byte).
- A BIR AccessPattern (bir/inst.py) becomes a numpy view with np.ndarray(buffer=...,
  strides=...) (sim/view_geometry.py): the partition pair first, then one axis per
  [step, num] free pair, offsets in elements of the access dtype. No copy, no Python loop
  per element or partition.
- Before a view is made, the access is checked: more than 128 partitions, a start
  partition that is not 0/32/64/96 (NKI: >64 partitions start at 0, 33..64 at 0 or 64),
  partitions past the location, or free elements outside [0, row) raise SimError with
  the indices.
- Definedness (tilecc/definedness.py): every byte of SBUF, PSUM and HBM has a shadow byte
  (0xff = defined) in a parallel mask, and each accumulator lane a flag. Between `begin`
  and `finish` of an instruction the machine records the undefined elements it reads; at
  `finish` each output it wrote gets the shadow the default rule (or the executor's own
  mask) gives, and undefined data reaching HBM is reported by the `uninit` policy.
- Accumulator registers: one float32 per partition for the Activation engine and one for
  the vector engine (DVE; shared by Exponential, tensor-scalar reduce and cumulative).
- `reset()` returns everything to the power-on state (memory zero, nothing written,
  registers zero and defined, nothing placed) without touching memory (stale locations:
  sim/memory.py). A view's first touch of a stale location clears it, unless the caller
  writes the whole view (`whole=True`) and the view covers the location. A write view of
  a borrowed input copies it first (`own`) and drops the views of the caller's array.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from tilecc import counter_rng

from tilecc.bir.enums import MemoryKind
from tilecc.bir.inst import AccessPattern, Inst
from tilecc.errors import SimError
from tilecc.definedness import UNINIT_POLICIES, Origin, UndefinedRead, derive, first_index
from tilecc.sim.dtypes import numpy_dtype
from tilecc.sim.inst_label import describe_inst
from tilecc.sim.memory import SBUF_BYTES, Layout, Memory  # noqa: F401 (SBUF_BYTES: re-exported)
from tilecc.sim.view_geometry import PARTITIONS, view_geometry

START_PARTITIONS = (0, 32, 64, 96)
_MASK_DTYPES: dict[int, np.dtype[np.unsignedinteger]] = {
    1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
_MASK_FULL: dict[int, int] = {size: int(np.iinfo(d).max) for size, d in _MASK_DTYPES.items()}
_KEPT_VIEWS_MAX = 1 << 16   # access objects whose views a next run may adopt (memory bound)


@dataclass(slots=True, eq=False)   # hashed by identity: the key of an instruction's outputs
class CachedView:
    """The data and shadow views of one access object, and when it was last seen defined."""

    ap: AccessPattern
    view: np.ndarray
    mask: np.ndarray
    full: int
    checked: int  # the machine's shadow generation at which it was all defined (-1: never)
    start_ok: bool  # the start-partition rule was checked (or does not apply: HBM)
    hbm: bool
    covers: bool  # the view is every byte of its location (its partitions' rows), once each
    borrowed: bool  # a view of a borrowed input's bytes (read-only)
    ready: int = -1  # the run in which its first touch was done (`Machine._first_touch`)


# a run's layout (in placement order), its views by object and by value, the arrays it borrowed
KeptViews = tuple[tuple[Layout, ...], dict[int, tuple[AccessPattern, CachedView]],
                  dict[AccessPattern, CachedView], list[np.ndarray]]


def _allowed_start(start: int, count: int) -> bool:
    if count > 64:
        return start == 0
    if count > 32:
        return start in (0, 64)
    return start in START_PARTITIONS


class Machine(Memory):
    """SBUF, PSUM, HBM tensors (sim/memory.py) and the engines' accumulator registers."""

    def __init__(self, uninit: str = "error") -> None:
        self.uninit = uninit
        self.reset()

    def reset(self) -> None:
        """Back to power-on (memory: Memory.reset_memory); the last run's views are kept
        aside with its layout, for `keep_views`."""
        layout = getattr(self, "_layout", None)
        self._kept_views: KeptViews | None = (
            None if layout is None
            else (tuple(layout), self._views, self._views_by_value, self._lenders))
        self.reset_memory()
        self.run = getattr(self, "run", -1) + 1   # views' first touches are per run
        self.act_acc = np.zeros(PARTITIONS, np.float32)
        self.dve_acc = np.zeros(PARTITIONS, np.float32)
        self.rng_state = counter_rng.power_on()  # Vector / GpSimd generators (tilecc/counter_rng.py)
        # views by access object (id, checked by identity) and by access value: a BIR file
        # read back holds one object per operand, codegen's programs share them
        self._views: dict[int, tuple[AccessPattern, CachedView]] = {}
        self._views_by_value: dict[AccessPattern, CachedView] = {}
        self.origins: dict[str, Origin] = {}   # location -> origin of undefined data in it
        self._registers = {id(self.act_acc): (self.act_acc, np.zeros(PARTITIONS, bool)),
                           id(self.dve_acc): (self.dve_acc, np.zeros(PARTITIONS, bool))}
        self._register_origins: dict[int, Origin] = {}
        self._inst: Inst | None = None
        self._reads: list[UndefinedRead] = []
        # outputs of the running instruction: their view entry and declared undefined mask
        self._writes: dict[CachedView, np.ndarray | None] = {}
        self._reported: set[str] = set()

    # ------------------------------------------------------------------ placement

    def keep_views(self) -> None:
        """Once every location is placed: adopt the last run's views when this run placed the
        same locations at the same columns on the same bytes (a program run again: its HBM
        arrays came back to the same locations, its inputs are the same arrays), instead of
        making them again (~1 us per access object)."""
        kept, self._kept_views = self._kept_views, None
        if (kept is not None and not self._views and kept[0] == tuple(self._layout)
                and len(kept[1]) <= _KEPT_VIEWS_MAX):
            self._views, self._views_by_value = kept[1], kept[2]

    def forget(self, name: str) -> None:
        """Mark the bytes of SB / PSUM location `name` unwritten: it starts living on bytes
        an earlier location used."""
        placement = self.placement(name)
        placement.written[...] = 0
        self.generation += 1
        self.origins.pop(name, None)

    # ------------------------------------------------------------------ views

    def view(self, ap: AccessPattern, *, write: bool, dma: bool = False,
             whole: bool = False) -> np.ndarray:
        """The numpy view of `ap` (shape: partitions, then each free pair's num).

        A read records the undefined elements it meets (for `finish`); `write=True` records
        the access as an output of the instruction, whose shadow `finish` sets (the caller
        assigns through the view right after). `whole=True`: the caller assigns every
        element of the view before it asks for another view of the location, so a stale
        location the view covers need not be cleared first. Views are cached per access
        object and per access value (equal accesses share one view and its definedness
        state) until reset; an access found all defined is not checked again until some
        bytes become undefined (`generation`).
        """
        hit = self._views.get(id(ap))
        entry = hit[1] if hit is not None and hit[0] is ap else self._cache_view(ap)
        if entry.ready != self.run:
            entry = self._first_touch(ap, entry, write, dma, whole)
        if write:
            if entry not in self._writes:
                self._writes[entry] = None
        elif entry.checked != self.generation:
            if entry.mask.size and entry.mask.min() != entry.full:
                undefined = entry.mask != entry.full
                self._reads.append(UndefinedRead(undefined, self._origin(entry, undefined)))
            else:
                entry.checked = self.generation
        return entry.view

    def _first_touch(self, ap: AccessPattern, entry: CachedView, write: bool, dma: bool,
                     whole: bool) -> CachedView:
        """What an entry needs before its first use in a run: the start-partition rule
        checked (not for DMA), its location cleared if stale (unless `whole` writes all of
        it), a borrowed input copied before a write (its views dropped)."""
        if not entry.start_ok and not dma:
            self._check_start(ap)
            entry.start_ok = True
        if ap.memref in self._stale:   # the location's first touch since placed
            self._stale.discard(ap.memref)
            if not (write and whole and entry.covers):
                self.clear(self.placements[ap.memref])
        if write and entry.borrowed:
            self.own(self.placements[ap.memref])
            self._views = {key: hit for key, hit in self._views.items()
                           if hit[0].memref != ap.memref}
            self._views_by_value = {at: view for at, view in self._views_by_value.items()
                                    if at.memref != ap.memref}
            entry = self._cache_view(ap)
        if entry.start_ok and not entry.borrowed:
            entry.ready = self.run
        return entry

    def undefined(self, ap: AccessPattern) -> np.ndarray:
        """The undefined elements of `ap` now (a bool mask of its view's shape)."""
        hit = self._views.get(id(ap))
        if hit is None or hit[0] is not ap:
            self.view(ap, write=False, dma=True)
            hit = self._views[id(ap)]
        entry = hit[1]
        if entry.ready != self.run:
            entry = self._first_touch(ap, entry, False, True, False)
        return entry.mask != entry.full

    def declare(self, ap: AccessPattern, undefined: np.ndarray) -> None:
        """An executor's own rule: the output `ap` gets exactly `undefined` at `finish`."""
        entry = self._views[id(ap)][1]
        self._writes[entry] = np.broadcast_to(undefined, entry.view.shape)

    def _cache_view(self, ap: AccessPattern) -> CachedView:
        """The view of an access object met for the first time (one per access value)."""
        entry = self._views_by_value.get(ap)
        if entry is None:
            entry = self._make_view(ap)
            self._views_by_value[ap] = entry
        self._views[id(ap)] = (ap, entry)
        return entry

    # ------------------------------------------------------------------ definedness

    def begin(self, inst: Inst) -> None:
        """Start recording the reads and writes of `inst` (the records of the one before
        were emptied by its `finish`, or by the fault that ended it)."""
        self._inst = inst
        if self._reads:
            self._reads = []
        if self._writes:
            self._writes = {}

    def finish(self) -> None:
        """Give each output of the instruction its shadow; report undefined data reaching HBM."""
        reads, writes = self._reads, self._writes
        if not reads and len(writes) == 1:   # the common case: one output, nothing undefined
            (entry, declared), = writes.items()
            if declared is None:
                writes.clear()
                if entry.checked != self.generation:
                    entry.mask[...] = entry.full
                    entry.checked = self.generation
                return
        self._reads, self._writes = [], {}
        for entry, declared in writes.items():
            shape = entry.view.shape
            if declared is not None:
                found = (declared, reads[0].origin if reads else self._origin_here(entry)) \
                    if declared.any() else None
            else:
                found = derive(reads, shape) if reads else None
            if found is None:
                if entry.checked != self.generation:
                    entry.mask[...] = entry.full
                    entry.checked = self.generation
                continue
            undefined, origin = found
            entry.mask[...] = np.where(undefined, 0, entry.full).astype(entry.mask.dtype)
            self.generation += 1
            self.origins[entry.ap.memref] = origin
            if entry.hbm:
                element = self.element(entry.ap, first_index(undefined))
                self.report(f"undefined data reaches HBM tensor {entry.ap.memref!r} element "
                            f"{list(element)}; {origin.text()}")

    def read_registers(self, regs: np.ndarray, lane: slice) -> np.ndarray:
        """The accumulator registers `regs[lane]` (act_acc / dve_acc), as a recorded read."""
        flags = self._registers[id(regs)][1][lane]
        if flags.any():
            origin = self._register_origins.get(id(regs)) or Origin("an accumulator register",
                                                                    "accumulator", (0,))
            self._reads.append(UndefinedRead(flags.reshape(-1, 1), origin))
        return regs[lane]

    def write_registers(self, regs: np.ndarray, lane: slice, values: np.ndarray) -> None:
        """Set `regs[lane]`; their flags follow the reads the instruction made so far."""
        regs[lane] = values
        flags = self._registers[id(regs)][1]
        count = len(range(*lane.indices(PARTITIONS)))
        found = derive(self._reads, (count, 1))
        flags[lane] = False if found is None else found[0].reshape(-1)
        if found is not None:
            self._register_origins[id(regs)] = found[1]

    def report(self, message: str, where: str | None = None) -> None:
        """Undefined data reached a sink: raise, warn once per message, or ignore (`uninit`);
        a warning starts with `where` (default: the instruction running)."""
        if self.uninit not in UNINIT_POLICIES:
            raise SimError(f"uninit policy {self.uninit!r}: expected one of {', '.join(UNINIT_POLICIES)}")
        if self.uninit == "error":
            raise SimError(message)
        if self.uninit == "warn" and message not in self._reported:
            self._reported.add(message)
            if where is None:
                where = describe_inst(self._inst) if self._inst is not None else "simulator"
            print(f"warning: {where}: {message}", file=sys.stderr)

    def _origin(self, entry: CachedView, undefined: np.ndarray) -> Origin:
        """Where the undefined elements of a read came from: data an earlier instruction
        computed from undefined reads carries that origin; else this read is the first."""
        known = self.origins.get(entry.ap.memref)
        if known is not None:
            return known
        where = describe_inst(self._inst) if self._inst is not None else "an input"
        return Origin(where, entry.ap.memref, self.element(entry.ap, first_index(undefined)))

    def _origin_here(self, entry: CachedView) -> Origin:
        where = describe_inst(self._inst) if self._inst is not None else "an input"
        return Origin(where, entry.ap.memref, (0,))

    def element(self, ap: AccessPattern, index: tuple[int, ...]) -> tuple[int, int]:
        """[partition, free element] in its location of element `index` of access `ap`."""
        pl = self.placement(ap.memref)
        if pl.loc.kind == MemoryKind.HBM:
            flat = ap.offset + sum(i * step for i, (step, _) in zip(index, ap.ap))
        else:
            flat = ap.offset + index[0] * pl.row + sum(
                i * step for i, (step, _) in zip(index[1:], ap.ap[1:]))
        partition, free = divmod(flat, pl.row)
        return partition, free

    def _make_view(self, ap: AccessPattern) -> CachedView:
        pl = self.placement(ap.memref)
        shape, byte_offset, strides = view_geometry(pl, ap)
        dtype = numpy_dtype(ap.dtype)
        view = np.ndarray(shape, dtype, buffer=pl.data, offset=byte_offset, strides=strides)
        # the mask has the data's geometry, as unsigned integers of the same size: an
        # element is defined when all its bytes are 0xff
        mask_dtype = _MASK_DTYPES[dtype.itemsize]
        mask = np.ndarray(shape, mask_dtype, buffer=pl.written, offset=byte_offset,
                          strides=strides)
        hbm = pl.loc.kind == MemoryKind.HBM
        # contiguous from the location's first byte over all its partitions' rows: each
        # byte once (a step-0 or reversed pair is not contiguous)
        covers = (byte_offset == 0 and view.flags.c_contiguous
                  and view.nbytes == pl.loc.partitions * pl.data.shape[1])
        return CachedView(ap, view, mask, _MASK_FULL[dtype.itemsize], -1, hbm, hbm, covers,
                          pl.borrowed is not None)

    def _check_start(self, ap: AccessPattern) -> None:
        """The engines' start-partition rule (32-partition SBUF banks); DMA queues address
        any partition, so copies skip it (`view(..., dma=True)`)."""
        pl = self.placement(ap.memref)
        if pl.loc.kind == MemoryKind.HBM:
            return
        start, pnum = ap.offset // pl.row, ap.ap[0][1]
        if not _allowed_start(start, pnum):
            raise SimError(f"access to {ap.memref!r} starts at partition {start} with {pnum} "
                           f"partitions (start must be 0/32/64/96; >32 partitions: 0/64; "
                           f">64: 0)")
