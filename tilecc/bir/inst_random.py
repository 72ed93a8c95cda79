"""BIR instructions of random numbers and device printing (bir.inst's invariants).

Each is the BIR form of the KLR operator of klr.ast_random of the same name (semantics
there; the generator and its state in tilecc/counter_rng.py). The header `engine` is the
engine whose generator state the instruction uses (DVE or Pool). Operand order:
- Rng: outs [dst]. Rand2: ins [min, max] (Immediates or [P,1]), outs [dst].
- RandGetState: outs [dst [P, 6] uint32]. RandSetState: ins [src [P, 6] uint32], no outs.
- SetRngSeed: ins [src [1,1]], no outs (the Vector Engine's lanes are seeded).
- Dropout: ins [data, threshold], outs [dst]; keep_rate: the threshold is a keep rate.
- DevicePrint: ins [src], no outs; prefix, location (the kernel file:line, "" unknown),
  to_stderr (else stdout).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tilecc.bir.inst import INST_CLASSES, Inst


@dataclass(slots=True)
class InstRng(Inst):
    OPCODE: ClassVar[int] = 320


@dataclass(slots=True)
class InstRand2(Inst):
    OPCODE: ClassVar[int] = 321


@dataclass(slots=True)
class InstRandGetState(Inst):
    OPCODE: ClassVar[int] = 322


@dataclass(slots=True)
class InstRandSetState(Inst):
    OPCODE: ClassVar[int] = 323


@dataclass(slots=True)
class InstSetRngSeed(Inst):
    OPCODE: ClassVar[int] = 324


@dataclass(slots=True)
class InstDropout(Inst):
    OPCODE: ClassVar[int] = 325
    keep_rate: bool = False


@dataclass(slots=True)
class InstDevicePrint(Inst):
    OPCODE: ClassVar[int] = 326
    prefix: str = ""
    location: str = ""
    to_stderr: bool = True


RANDOM_INSTS: tuple[type[Inst], ...] = (
    InstRng, InstRand2, InstRandGetState, InstRandSetState, InstSetRngSeed, InstDropout,
    InstDevicePrint)
# instructions that write no access pattern (engine state or the console)
NO_OUTPUT: frozenset[type[Inst]] = frozenset({InstRandSetState, InstSetRngSeed, InstDevicePrint})
INST_CLASSES.update({cls.__name__[4:]: cls for cls in RANDOM_INSTS})
