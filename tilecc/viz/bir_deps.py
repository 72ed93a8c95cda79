"""BIR dependencies through memory: which instruction reads what another one wrote.

Contract: `memory_dependencies(program)` returns (writer, reader, memref) triples, one per
pair and memory location, for every instruction that reads an element some earlier
instruction wrote last (read-after-write; program inputs have no writer). An access
pattern's elements are offset + sum(x_i * step_i) over all its [step, num] pairs, the
partition pair included (its step is the row length, bir/inst.py), numbered in the
location's partition-major element order. Engines' accumulator registers are not memory
and make no edge; the drains of those registers (ReadActivationAccumulator,
DveReadAccumulator) name the AP they WRITE in `ins` (bir/inst.py), so it counts as written.
`dependency_dot(program, prefix)` draws them: one node per instruction
(id `<prefix>g-<index>`, labelled with name, opcode and engine), edges labelled with the
memory location.
"""

from __future__ import annotations

import numpy as np

from tilecc.bir.inst import AccessPattern, Inst, InstDveReadAccumulator, \
    InstReadActivationAccumulator, Program
from tilecc.sim.dtypes import numpy_dtype
from tilecc.viz.hlo_dot import GRAPH_ATTRS, quote


def access_elements(ap: AccessPattern) -> np.ndarray:
    flat = np.array([ap.offset], dtype=np.int64)
    for step, num in ap.ap:
        flat = (flat[:, None] + np.arange(num, dtype=np.int64)[None, :] * step).ravel()
    return flat


_DRAINS = (InstReadActivationAccumulator, InstDveReadAccumulator)


def reads_and_writes(inst: Inst) -> tuple[list[AccessPattern], list[AccessPattern]]:
    ins = [a for a in inst.ins if isinstance(a, AccessPattern)]
    return ([], ins + list(inst.outs)) if isinstance(inst, _DRAINS) else (ins, list(inst.outs))


def memory_dependencies(program: Program) -> list[tuple[int, int, str]]:
    sizes = {loc.name: loc.partitions * loc.bytes_per_partition // numpy_dtype(loc.dtype).itemsize
             for loc in program.memory_locations}
    last_writer = {name: np.full(size, -1, dtype=np.int64) for name, size in sizes.items()}
    edges: list[tuple[int, int, str]] = []
    seen: set[tuple[int, int, str]] = set()
    for index, inst in enumerate(program.instructions):
        reads, writes = reads_and_writes(inst)
        for arg in reads:
            if arg.memref not in last_writer:
                continue
            writers = last_writer[arg.memref]
            elements = access_elements(arg)
            elements = elements[(elements >= 0) & (elements < writers.size)]
            for writer in np.unique(writers[elements]):
                edge = (int(writer), index, arg.memref)
                if writer >= 0 and edge not in seen:
                    seen.add(edge)
                    edges.append(edge)
        for out in writes:
            if (target := last_writer.get(out.memref)) is not None:
                elements = access_elements(out)
                target[elements[(elements >= 0) & (elements < target.size)]] = index
    return edges


def dependency_dot(program: Program, prefix: str) -> str:
    parts = [f"digraph {quote(program.name)} {{\n", GRAPH_ATTRS]
    for index, inst in enumerate(program.instructions):
        label = f"{inst.name}\n{type(inst).__name__[4:]}\n{inst.engine.name}"
        parts.append(f"  i{index} [id={quote(f'{prefix}g-{index}')}, label={quote(label)}];\n")
    for writer, reader, memref in memory_dependencies(program):
        parts.append(f"  i{writer} -> i{reader} [label={quote(memref)}];\n")
    parts.append("}\n")
    return "".join(parts)
