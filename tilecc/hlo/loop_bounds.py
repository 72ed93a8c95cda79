"""Which entry parameters may bound a while loop: what `hlo-opt --verify` names when random
inputs make a loop run past the step limit.

Contract: `loop_bound_parameters(module)` returns `p<i>` for each entry parameter i whose
values reach the operand of a while instruction of the entry computation (through any
instructions of the entry: data flow, not calls), in parameter order. A loop's trip count
can only depend on its initial state, so giving those parameters values (`--input NAME=
FILE.npy`) is how such a module is made to terminate.
"""

from __future__ import annotations

from tilecc.hlo.ir import HloInstruction, HloModule
from tilecc.hlo.opcodes import HloOpcode as Op


def loop_bound_parameters(module: HloModule) -> list[str]:
    """See the module contract."""
    entry = module.entry
    if entry is None:
        return []
    found = []
    for number, param in enumerate(entry.parameters):
        seen: set[int] = set()
        stack: list[HloInstruction] = [param]
        while stack:
            inst = stack.pop()
            if id(inst) in seen:
                continue
            seen.add(id(inst))
            if inst.opcode is Op.WHILE:
                found.append(f"p{number}")
                break
            stack.extend(inst.users)
    return found
