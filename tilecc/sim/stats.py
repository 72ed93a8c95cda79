"""`tilecc run kernel.py:fn --stats`: what a program asks of the machine, and its estimated time.

Contract: `program_stats(program)` counts instructions per engine track and the bytes each
DMA queue moves (tracks as sim/profile.py assigns them), and the SBUF / PSUM high-water
marks in bytes per partition where the simulator places the locations (side by side, or
shared by lifetime: sim/placement.py); `render_stats` prints them with the estimated time
of the profile's schedule, marked as an estimate from the documented cost model.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from tilecc.bir.enums import MemoryKind
from tilecc.bir.inst import Program
from tilecc.sim.memory import ALIGN
from tilecc.sim.placement import plan_columns
from tilecc.sim.profile import (ESTIMATE_NOTE, Slice, cycles_to_us, dma_bytes, is_dma, schedule,
                                total_cycles, write_chrome_trace)


@dataclass(frozen=True, slots=True)
class ProgramStats:
    instructions: dict[str, int]          # track -> instruction count
    dma_bytes: dict[str, int]             # DMA queue -> bytes moved
    high_water: dict[str, int]            # "SBUF" / "PSUM" -> bytes per partition
    fallback: int                         # instructions estimated with the fallback
    slices: list[Slice]


def program_stats(program: Program) -> ProgramStats:
    slices = schedule(program)
    counts = Counter(s.track for s in slices)
    moved: Counter[str] = Counter()
    for s in slices:
        if is_dma(s.inst):
            moved[s.track] += dma_bytes(s.inst)
    plan = plan_columns(program)
    high = {"SBUF": 0, "PSUM": 0}
    next_free = {MemoryKind.SB: 0, MemoryKind.PSUM: 0}
    for loc in program.memory_locations:
        if loc.kind == MemoryKind.HBM:
            continue
        base = plan.base[loc.name] if plan is not None else next_free[loc.kind]
        end = base + loc.bytes_per_partition
        next_free[loc.kind] = max(next_free[loc.kind], -(-end // ALIGN) * ALIGN)
        key = "SBUF" if loc.kind == MemoryKind.SB else "PSUM"
        high[key] = max(high[key], end)
    return ProgramStats(dict(counts), dict(moved), high,
                        sum(1 for s in slices if s.source == "fallback"), slices)


def render_stats(stats: ProgramStats) -> str:
    lines = ["instructions per engine:"]
    lines += [f"  {track:<22} {count}" for track, count in sorted(stats.instructions.items())]
    lines.append("bytes moved per DMA queue:")
    lines += [f"  {queue:<22} {count}" for queue, count in sorted(stats.dma_bytes.items())] or ["  (none)"]
    lines.append("high-water marks (bytes per partition):")
    lines += [f"  {memory:<22} {count}" for memory, count in stats.high_water.items()]
    cycles = total_cycles(stats.slices)
    lines.append(f"estimated time: {cycles:.0f} engine cycles = {cycles_to_us(cycles):.3f} us "
                 f"({ESTIMATE_NOTE}; {stats.fallback} instruction(s) use the labelled fallback)")
    return "\n".join(lines)


def report_estimates(program: Program, stats: bool, trace_path: str | None) -> None:
    """`--stats` (printed) and `--profile TRACE.json` (written, and a line saying so)."""
    result = program_stats(program)
    if stats:
        print(render_stats(result))
    if trace_path:
        write_chrome_trace(result.slices, trace_path)
        print(f"wrote {trace_path}: a Chrome / Perfetto trace (open it at ui.perfetto.dev); "
              f"{ESTIMATE_NOTE}")
