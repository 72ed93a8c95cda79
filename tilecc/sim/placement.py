"""Where the simulator puts SB and PSUM memory locations that do not all fit side by side.

Contract: `plan_columns(program)` returns None when, per memory, the SB / PSUM locations
fit one after another (the machine's bump order: each at the next 64-byte aligned column
of every partition), which is how every program that fits runs. Otherwise it returns a
ColumnPlan: a base column for every SB / PSUM location, and per instruction index the
locations that start living there on bytes an earlier location used (the simulator marks
those bytes undefined before the instruction runs, so what the earlier tenant left is
undefined data, tilecc/definedness.py).

Invariants:
- A location lives from the first to the last instruction naming it among its inputs or
  outputs; two locations share bytes only if their lives do not overlap. This is what a
  compiler's allocator does for the tiles of successive loop iterations, which the NKI
  frontend and the klr tool trace as distinct tensors: without it a loop over a large
  tensor (256 iterations of three [128, 64] float32 tiles) needs more than SBUF's 192 KiB
  per partition although only a few tiles are ever live at once.
- First fit in order of first use, 64-byte aligned (PSUM: kept to its banks,
  sim/psum_banks.py); a location no instruction names gets
  a range of its own past every other. When the locations live at one instruction do not
  fit, SimError names that instruction and the bytes they need.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from tilecc.bir.enums import MemoryKind
from tilecc.bir.inst import AccessPattern, MemoryLocation, Program
from tilecc.errors import SimError
from tilecc.sim.inst_label import describe_inst
from tilecc.sim.psum_banks import bank_start

ALIGN = 64
CAPACITY = {MemoryKind.SB: 0x30000, MemoryKind.PSUM: 0x4000}


@dataclass(slots=True)
class ColumnPlan:
    base: dict[str, int]
    # instruction index -> locations whose first use it is, on bytes an earlier one used
    fresh: dict[int, list[str]] = field(default_factory=dict)


def _aligned(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def _start(kind: MemoryKind, base: int, width: int) -> int:
    return bank_start(base, width) if kind is MemoryKind.PSUM else base


def fits_side_by_side(locations: list[MemoryLocation]) -> bool:
    used = dict.fromkeys(CAPACITY, 0)
    for loc in locations:
        if loc.kind is MemoryKind.PSUM:
            used[loc.kind] = bank_start(used[loc.kind], loc.bytes_per_partition)
        if loc.kind in used:
            if used[loc.kind] + loc.bytes_per_partition > CAPACITY[loc.kind]:
                return False
            used[loc.kind] = _aligned(used[loc.kind] + loc.bytes_per_partition)
    return True


def plan_columns(program: Program) -> ColumnPlan | None:
    if fits_side_by_side(program.memory_locations):
        return None
    on_chip = {loc.name: loc for loc in program.memory_locations if loc.kind in CAPACITY}
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for index, inst in enumerate(program.instructions):
        for arg in (*inst.ins, *inst.outs):
            if isinstance(arg, AccessPattern) and arg.memref in on_chip:
                first.setdefault(arg.memref, index)
                last[arg.memref] = index
    plan = ColumnPlan({})
    for kind in CAPACITY:
        names = sorted((n for n, loc in on_chip.items() if loc.kind is kind and n in first),
                       key=first.__getitem__)
        _first_fit(kind, names, on_chip, first, last, plan, program)
        unused = [n for n, loc in on_chip.items() if loc.kind is kind and n not in first]
        top = max((_aligned(plan.base[n] + on_chip[n].bytes_per_partition) for n in names), default=0)
        for name in unused:   # never accessed: out of everyone's way (placement still checks it fits)
            plan.base[name] = top
            top = _aligned(top + on_chip[name].bytes_per_partition)
    return plan


def _first_fit(kind: MemoryKind, names: list[str], locs: dict[str, MemoryLocation],
               first: dict[str, int], last: dict[str, int], plan: ColumnPlan, program: Program) -> None:
    live: list[tuple[int, int, str]] = []   # (base, end, name), sorted by base
    high = 0   # first column no earlier location has used
    for name in names:
        start = first[name]
        live = [r for r in live if last[r[2]] >= start]
        width = locs[name].bytes_per_partition
        base = 0
        for lo, hi, _ in live:
            base = _start(kind, base, width)
            if base + width <= lo:
                break
            base = max(base, _aligned(hi))
        base = _start(kind, base, width)
        if base + width > CAPACITY[kind]:
            need = sum(locs[r[2]].bytes_per_partition for r in live) + width
            inst = program.instructions[start]
            where = (describe_inst(inst) if inst.pos is not None
                     else f"instruction {start} {inst.name!r}")   # the kernel line when known
            raise SimError(f"{where}: the {len(live) + 1} {kind.name} locations live there need "
                           f"{need} bytes per partition, more than {CAPACITY[kind]}")
        bisect.insort(live, (base, base + width, name))
        plan.base[name] = base
        if base < high:
            plan.fresh.setdefault(start, []).append(name)
        high = max(high, base + width)
