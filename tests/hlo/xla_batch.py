"""Many HLO modules in one XLA CPU compile, for oracle runs over a corpus.

One XLA CPU compile costs about 65 ms of CPU whatever the module's size (measured on the
corpus' small modules, jaxlib 0.10.2); 40 modules merged into one cost about 16 ms each.
Contract: `run_batched(session, items, limit)` runs every item -- (key, module, inputs,
replicas, partitions), the module parsed for this use only (it is renamed in place) -- and
returns key -> the module's outputs (flattened like XlaSession's) or the OracleError XLA gave
for that module alone. Items of equal device counts are merged, at most `limit` per compile:
each module's computations and instructions get the prefix `b<k>.`, its entry parameters are
renumbered after the previous module's, and the merged entry returns the tuple of every
module's root. Module-level attributes (layouts, aliasing, schedule) are not carried over:
none of them changes what a module computes. When XLA refuses a merged module, the module its
message names (by prefix) runs alone and the rest are merged again; a message that names
none splits the batch in halves. A module whose root holds a token runs alone, and so does
one with collectives: XLA CPU's collectives wait for every device, so one whose devices
do not all arrive (a collective in a loop or branch the devices take differently) hangs
until the session's timeout, and alone it takes no other module with it. A module with an
`rng` runs alone in a fresh child of its own: XLA CPU keys each rng from a process-wide
generator, so its values depend on how many rng instructions the child expanded before
(tilecc.hlo.interp.rng_steps), and the interpreter's are those of a module compiled first in
its process (a fresh child costs its jax import, about a second).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from tilecc.errors import OracleError
from tilecc.hlo.ir import HloModule
from tilecc.hlo.opcodes import COLLECTIVES, HloOpcode
from tilecc.hlo.printer import (computations_in_print_order, instructions_in_print_order,
                                print_computation, print_instruction, print_module)
from tilecc.hlo.random_inputs import is_integer_dtype
from tilecc.hlo.types import Shape
from tilecc.hlo.xla import XlaJob, XlaSession

Item = tuple[str, HloModule, list[Any], int, int]
_PREFIX = re.compile(r"\bb(\d+)\.")


def _leaf_count(shape: Shape) -> int:
    return sum(_leaf_count(s) for s in shape.tuple_shapes) if shape.is_tuple else 1


def _has_token(shape: Shape) -> bool:
    return any(_has_token(s) for s in shape.tuple_shapes) if shape.is_tuple else \
        shape.is_token


def close(got: np.ndarray, want: np.ndarray) -> bool:
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind == "b" or is_integer_dtype(got.dtype) or got.dtype.itemsize == 0:
        return bool(np.array_equal(got, want))
    wide = np.complex128 if got.dtype.kind == "c" else np.float64
    g, w = got.astype(wide), want.astype(wide)
    return bool(np.all(np.isclose(g, w, rtol=2e-6, atol=1e-6) | (np.isnan(g) & np.isnan(w))))


def clipped(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(clipped(v) for v in value)
    if value.dtype.kind in "fV" and value.dtype.itemsize and not is_integer_dtype(value.dtype):
        wide = value.astype(np.float64)
        return np.where(np.isfinite(wide), np.clip(wide, -1, 1), wide).astype(value.dtype)
    return value


def prefix_names(module: HloModule, k: int) -> None:
    """Every computation and instruction of `module` renamed `b<k>.<name>`; the module `b<k>`."""
    for comp in module.computations:
        comp.name = f"b{k}.{comp.name}"
        for inst in comp.instructions:
            inst.name = f"b{k}.{inst.name}"
    module.name = f"b{k}"


def _communicates(module: HloModule) -> bool:
    return any(inst.opcode in COLLECTIVES for comp in module.computations
               for inst in comp.instructions)


def _draws_rng(module: HloModule) -> bool:
    return any(inst.opcode is HloOpcode.RNG for comp in module.computations
               for inst in comp.instructions)


def merged_text(modules: list[HloModule], replicas: int, partitions: int) -> str:
    """One module computing every module of `modules` (renamed by prefix_names; parameters
    renumbered in place); see the module contract."""
    out = [f"HloModule batch, replica_count={replicas}, num_partitions={partitions}", ""]
    entry: list[str] = []
    roots = []
    offset = 0
    for module in modules:
        assert module.entry is not None and module.entry.root is not None
        for number, param in enumerate(module.entry.parameters):
            param.parameter_number = offset + number
        offset += len(module.entry.parameters)
        for comp in computations_in_print_order(module):
            if comp is not module.entry:
                out += [print_computation(comp), ""]
        entry += [print_instruction(inst) for inst in instructions_in_print_order(module.entry)]
        roots.append(module.entry.root)
    shapes = ", ".join(root.shape.to_text() for root in roots)
    names = ", ".join("%" + root.name for root in roots)
    entry.append(f"  ROOT %batch.root = ({shapes}) tuple({names})")
    return "\n".join(out + ["ENTRY %batch.main {", *entry, "}", ""])


def run_batched(session: XlaSession, items: list[Item], limit: int
                ) -> dict[str, list[np.ndarray] | OracleError]:
    """See the module contract."""
    results: dict[str, list[np.ndarray] | OracleError] = {}
    groups: dict[tuple[int, int], list[Item]] = {}
    for k, item in enumerate(items):
        prefix_names(item[1], k)
        root = item[1].entry.root if item[1].entry is not None else None
        if _draws_rng(item[1]):
            with XlaSession(session.devices, session.timeout) as fresh:
                results[item[0]] = _alone(fresh, item)
        elif root is None or _has_token(root.shape) or _communicates(item[1]):
            results[item[0]] = _alone(session, item)
        else:
            groups.setdefault((item[3], item[4]), []).append(item)
    for (replicas, partitions), group in sorted(groups.items()):
        for start in range(0, len(group), limit):
            _run_merged(session, group[start:start + limit], replicas, partitions, results)
    return results


def _alone(session: XlaSession, item: Item) -> list[np.ndarray] | OracleError:
    key, module, inputs, replicas, partitions = item
    assert module.entry is not None
    for number, param in enumerate(module.entry.parameters):
        param.parameter_number = number
    value = session.submit(XlaJob("run", print_module(module), inputs, replicas, partitions))
    assert value is not None
    return value


def _run_merged(session: XlaSession, batch: list[Item], replicas: int, partitions: int,
                results: dict[str, list[np.ndarray] | OracleError]) -> None:
    while batch:
        if len(batch) == 1:
            results[batch[0][0]] = _alone(session, batch[0])
            return
        text = merged_text([item[1] for item in batch], replicas, partitions)
        inputs = [x for item in batch for x in item[2]]
        value = session.submit(XlaJob("run", text, inputs, replicas, partitions))
        if isinstance(value, list):
            at = 0
            for key, module, *_ in batch:
                assert module.entry is not None and module.entry.root is not None
                count = _leaf_count(module.entry.root.shape)
                results[key] = value[at:at + count]
                at += count
            return
        named = {int(k) for k in _PREFIX.findall(str(value))}
        culprits = [item for item in batch if int(item[1].name[1:]) in named]
        if len(culprits) == 1:
            results[culprits[0][0]] = _alone(session, culprits[0])
            batch = [item for item in batch if item is not culprits[0]]
            continue
        half = len(batch) // 2
        _run_merged(session, batch[:half], replicas, partitions, results)
        batch = batch[half:]
