"""KLR operators of random numbers and device printing (KLR HEAD names and fields:
`rng`, `rand2`, `randGetState`, `setRngSeed`, `randSetState`, `dropout`, `devicePrint`),
registered into `klr.ast.OPERATOR_CTOR` on import.

Semantics: the generator, its per-engine per-lane state and how seeds and draws map to
counters are defined once in tilecc/counter_rng.py (Philox4x32-10), for both executors.
- Rng (nki.isa.rng): dst = the low bits of one draw per element on `engine` (dve / pool).
- Rand2 (nki.isa.rand2): dst = min + (max - min) * u on the Vector Engine (min / max
  immediates or [P, 1] columns).
- RandGetState / RandSetState: the engine's 6 state words per lane to / from a [P, 6]
  uint32 tile. SetRngSeed (nki.isa.set_rng_seed): the Vector Engine's lanes seeded with
  the 32-bit value of the [1, 1] src.
- Dropout (nki.isa.dropout): dst = 0 where the element is dropped, else src; DropRate
  drops where u < threshold, KeepRate keeps where u < threshold (threshold an immediate or
  a [P, 1] column).
- DevicePrint (nl.device_print): prints `print_prefix`, the tensor's name, shape, dtype,
  its values and the statement's kernel file:line to `buffer` when it runs, in program order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from tilecc.klr.ast import OPERATOR_CTOR, Dtype, Engine, Operand, Pos, TensorRef


class DropoutThresholdType(IntEnum):
    DropRate = 0
    KeepRate = 1


class PrintOutputBuffer(IntEnum):
    stdout = 0
    stderr = 1


@dataclass(slots=True)
class Rng:
    dst: TensorRef
    engine: Engine = Engine.dve
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class Rand2:
    dst: TensorRef
    min: Operand
    max: Operand
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class RandGetState:
    dst: TensorRef
    engine: Engine = Engine.pool
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class SetRngSeed:
    src: TensorRef
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class RandSetState:
    src: TensorRef
    engine: Engine = Engine.pool
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class Dropout:
    dst: TensorRef
    src: TensorRef
    threshold_type: DropoutThresholdType
    threshold: Operand
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class DevicePrint:
    src: TensorRef
    print_prefix: str
    buffer: PrintOutputBuffer = PrintOutputBuffer.stderr
    pos: Pos | None = field(default=None, compare=False)


RANDOM_CTORS: dict[type, str] = {
    Rng: "rng", Rand2: "rand2", RandGetState: "randGetState", SetRngSeed: "setRngSeed",
    RandSetState: "randSetState", Dropout: "dropout", DevicePrint: "devicePrint",
}
ENUMS = (DropoutThresholdType, PrintOutputBuffer)
OPERATOR_CTOR.update(RANDOM_CTORS)
