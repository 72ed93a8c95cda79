"""A simulated profile: each instruction's estimated cost, the engines run in parallel.

Contract: `schedule(program)` gives one Slice per instruction: its track (the engine it
runs on, or its DMA queue), start and end in estimated engine cycles, and where the cycles
come from. `write_chrome_trace(slices, path)` writes the timeline as a Chrome / Perfetto
trace (the JSON "traceEvents" format: one thread per track, one complete event per
instruction named with the NKI call and kernel line). `render_stats(...)` is `tilecc run
--stats`. Every output says the figures are ESTIMATES from the documented cost model, not
hardware measurements.

Cost tables: tilecc/sim/costs.py (the compute family) and one module per instruction family
(costs_<family>.py, each exposing `COSTS: dict[type[Inst], Callable[[Inst], float]]`) are
merged in ALL_COSTS below, the one place they meet. An instruction with no entry gets the
FALLBACK estimate, labelled "fallback" in the trace and the stats: a DMA costs
DMA_FIXED_CYCLES + bytes / DMA_BYTES_PER_CYCLE (the ISA reference publishes no DMA formula;
both constants are tilecc's assumptions), any other instruction max(MIN_II, N) (the
elementwise rate most pages give).

Scheduling model (a list scheduler): every engine (and each DMA queue) runs its instructions
in program order, one at a time, as a NeuronCore engine executes its instruction stream; an
instruction starts when its engine is free and every earlier instruction it depends on
through memory has finished: it reads or writes elements of a location an earlier one wrote
(read after write, write after write), or writes elements an earlier one read (write after
read). Elements are compared as [low, high] flat-offset ranges of each access (an
over-approximation for strided accesses). The engine of an instruction is its `engine`
field; Unassigned takes DEFAULT_ENGINES by opcode (else the Vector Engine). DMA instructions
are queued by direction: HBM -> on-chip "DMA in", on-chip -> HBM "DMA out", the rest "DMA
on-chip". Cycles become time at CLOCK_GHZ (an assumption: the pages give cycles only).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from tilecc.bir.enums import EngineType, MemoryKind
from tilecc.bir.inst import (AccessPattern, Inst, InstDMACopy, InstDveReadAccumulator,
                             InstExponential, InstIota, InstReadActivationAccumulator,
                             InstTensorScalarCache, Program)
from tilecc.fileio import write_text_atomic
from tilecc.sim.costs import COSTS as COMPUTE_COSTS, MIN_II, elements_per_partition
from tilecc.sim.dtypes import numpy_dtype
from tilecc.source_pos import describe

# The one merge point of the family cost tables (add `**costs_<family>.COSTS` here).
ALL_COSTS: dict[type[Inst], Callable[[Inst], float]] = {**COMPUTE_COSTS}

ESTIMATE_NOTE = ("estimated from the NKI ISA reference's documented instruction costs (tilecc's "
                 "cost model), not hardware measurements")
CLOCK_GHZ = 1.4                 # engine clock used to turn cycles into time (an assumption)
DMA_FIXED_CYCLES = 2000         # per DMA: descriptor and latency (an assumption, no published formula)
DMA_BYTES_PER_CYCLE = 64.0      # per DMA queue (an assumption)

DEFAULT_ENGINES: dict[type[Inst], EngineType] = {
    InstIota: EngineType.Pool, InstExponential: EngineType.DVE,
    InstTensorScalarCache: EngineType.DVE, InstDveReadAccumulator: EngineType.DVE,
    InstReadActivationAccumulator: EngineType.Activation,
}
_ENGINE_NAMES = {EngineType.Activation: "Scalar Engine (ACT)", EngineType.DVE: "Vector Engine (DVE)",
                 EngineType.Pool: "GpSimd Engine (POOL)", EngineType.PE: "Tensor Engine (PE)",
                 EngineType.SP: "Sync Engine (SP)"}


@dataclass(frozen=True, slots=True)
class Slice:
    inst: Inst
    track: str
    start: float     # estimated engine cycles
    end: float
    source: str      # "documented" (a cost table entry) or "fallback"

    @property
    def label(self) -> str:
        """`nl.exp kernel.py:12` (the NKI call and kernel line), else the BIR name."""
        pos = self.inst.pos
        if pos is None:
            return self.inst.name
        where = describe(pos.file, pos.line, pos.column)
        call = where.split(" ", 1)[1] if " " in where else ""
        place = f"{(pos.file or '<kernel>').rsplit('/', 1)[-1]}:{pos.line}"
        return f"{call} {place}" if call else place


def dma_bytes(inst: Inst) -> int:
    """Bytes a DMA instruction moves (its destination's elements times their size)."""
    out = inst.outs[0]
    return out.ap[0][1] * elements_per_partition(out) * numpy_dtype(out.dtype).itemsize


def fallback_cycles(inst: Inst) -> float:
    if is_dma(inst):
        return DMA_FIXED_CYCLES + dma_bytes(inst) / DMA_BYTES_PER_CYCLE
    data = next((a for a in inst.ins if isinstance(a, AccessPattern)), None) or \
        (inst.outs[0] if inst.outs else None)
    return max(MIN_II, elements_per_partition(data) if data is not None else 0)


def is_dma(inst: Inst) -> bool:
    return isinstance(inst, InstDMACopy) or inst.engine == EngineType.DMA


def estimate(inst: Inst) -> tuple[float, str]:
    """(cycles, "documented" | "fallback") of one instruction."""
    if (cost := ALL_COSTS.get(type(inst))) is not None:
        return float(cost(inst)), "documented"
    return float(fallback_cycles(inst)), "fallback"


def track_of(inst: Inst, kinds: dict[str, MemoryKind]) -> str:
    if is_dma(inst):
        src = next((a for a in inst.ins if isinstance(a, AccessPattern)), None)
        src_hbm = src is not None and kinds.get(src.memref) == MemoryKind.HBM
        dst_hbm = bool(inst.outs) and kinds.get(inst.outs[0].memref) == MemoryKind.HBM
        return "DMA in" if src_hbm and not dst_hbm else "DMA out" if dst_hbm and not src_hbm \
            else "DMA on-chip"
    engine = inst.engine if inst.engine != EngineType.Unassigned else \
        DEFAULT_ENGINES.get(type(inst), EngineType.DVE)
    return _ENGINE_NAMES.get(engine, engine.name)


def _span(ap: AccessPattern) -> tuple[int, int]:
    low = high = ap.offset
    for step, num in ap.ap:
        low, high = low + min(0, step * (num - 1)), high + max(0, step * (num - 1))
    return low, high


def schedule(program: Program) -> list[Slice]:
    """Each instruction's estimated slice (module docstring: the scheduling model)."""
    kinds = {loc.name: loc.kind for loc in program.memory_locations}
    engine_free: dict[str, float] = {}
    writes: dict[str, list[tuple[int, int, float]]] = {}
    reads: dict[str, list[tuple[int, int, float]]] = {}
    slices = []
    for inst in program.instructions:
        cycles, source = estimate(inst)
        track = track_of(inst, kinds)
        ins = [(a.memref, *_span(a)) for a in inst.ins if isinstance(a, AccessPattern)]
        outs = [(a.memref, *_span(a)) for a in inst.outs]
        ready = engine_free.get(track, 0.0)
        for memref, low, high in ins:
            ready = max([ready] + [end for lo, hi, end in writes.get(memref, ()) if lo <= high and low <= hi])
        for memref, low, high in outs:
            for table in (writes, reads):
                ready = max([ready] + [end for lo, hi, end in table.get(memref, ()) if lo <= high and low <= hi])
        end = ready + cycles
        engine_free[track] = end
        for memref, low, high in ins:
            reads.setdefault(memref, []).append((low, high, end))
        for memref, low, high in outs:
            writes.setdefault(memref, []).append((low, high, end))
        slices.append(Slice(inst, track, ready, end, source))
    return slices


def total_cycles(slices: list[Slice]) -> float:
    return max((s.end for s in slices), default=0.0)


def cycles_to_us(cycles: float) -> float:
    return cycles / (CLOCK_GHZ * 1000.0)


def chrome_trace(slices: list[Slice]) -> dict[str, object]:
    """The trace document: one thread per track, times in microseconds."""
    tracks = list(dict.fromkeys(s.track for s in slices))
    events: list[dict[str, object]] = [
        {"ph": "M", "pid": 1, "tid": 0, "name": "process_name",
         "args": {"name": f"tilecc simulated NeuronCore ({ESTIMATE_NOTE})"}}]
    for tid, track in enumerate(tracks, start=1):
        events.append({"ph": "M", "pid": 1, "tid": tid, "name": "thread_name", "args": {"name": track}})
        events.append({"ph": "M", "pid": 1, "tid": tid, "name": "thread_sort_index",
                       "args": {"sort_index": tid}})
    for s in slices:
        events.append({"ph": "X", "pid": 1, "tid": tracks.index(s.track) + 1, "name": s.label,
                       "ts": round(cycles_to_us(s.start), 6),
                       "dur": round(cycles_to_us(s.end - s.start), 6),
                       "args": {"bir": s.inst.name, "opcode": type(s.inst).__name__[4:],
                                "estimated_cycles": s.end - s.start, "cost": s.source}})
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"note": f"all times are {ESTIMATE_NOTE}", "clock_ghz": CLOCK_GHZ}}


def write_chrome_trace(slices: list[Slice], path: str) -> None:
    write_text_atomic(path, json.dumps(chrome_trace(slices), indent=1) + "\n")
