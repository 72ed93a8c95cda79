"""How the simulator names an instruction in errors, warnings and the profile.

Contract: `describe_inst(inst)` is `kernel.py:12:9 nl.exp: Activation-3 (Activation)`: the
kernel line and NKI call the instruction was lowered from (its `pos`, printed by
tilecc/source_pos.py), then its BIR name and opcode; without a position, the name and
opcode alone.
"""

from __future__ import annotations

from tilecc.bir.inst import Inst
from tilecc.source_pos import describe


def describe_inst(inst: Inst) -> str:
    """The kernel line, NKI call, BIR name and opcode of `inst`."""
    label = f"{inst.name} ({type(inst).__name__[4:]})"
    where = describe(inst.pos.file, inst.pos.line, inst.pos.column) if inst.pos is not None else ""
    return f"{where}: {label}" if where else label
