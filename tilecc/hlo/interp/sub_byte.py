"""Sub-byte integers (s4 / u4 / s2 / u2) computed as XLA CPU computes them.

Invariants: a value of a sub-byte type is held in its ml_dtypes type (int4 / uint4 / int2 /
uint2: one byte per element, the low n bits hold the value), as entry inputs, constants
and XLA's own results are; data movement copies those bytes and needs nothing from here.

Contract: an op on an n-bit type runs on an 8-bit carrier holding the operands' values
(`carried`) with the 8-bit type's semantics (elementwise.py) and keeps the low n bits of
the result (`narrow`), which is what XLA's n-bit integer ops give: add / subtract /
multiply / negate / abs wrap around (-8 + -1 = 7, abs(-8) = -8 in s4), divide and
remainder keep their zero and INT_MIN / -1 rules (-8 / -1 = -8, x / 0 = -1), compares and
max / min order the values. `READINGS` names the ops whose operands XLA reads otherwise
than as the type's own signedness (measured on jaxlib 0.10.2 over every pair of values):
- shift-right-logical shifts the n-bit pattern (zero-extended: s4 -8 >> 1 = 4) and
  shift-right-arithmetic the sign-extended one (u4 8 >> 1 = 12); every amount >= n read
  unsigned gives 0 or the sign fill, as the 8-bit rule does for amounts >= 8;
- count-leading-zeros counts in the n-bit pattern (the 8-bit count less 8 - n);
- population-count counts the bits of s4's sign-extended 8-bit value (s4 -8 has 5, -1 has
  8, which wraps to -8) but of s2's 2-bit pattern (s2 -1 has 2, which wraps to -2).
Power reads the type's own signedness: a u4 exponent of 8 is 8, not negative (3^8 = 1).
A convert from a float saturates at the n-bit range and maps NaN to 0
(`saturated_from_float`); integer and pred converts keep the low n bits.
"""

from __future__ import annotations

from typing import Callable

import ml_dtypes
import numpy as np

from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import PrimitiveType, bit_width, is_unsigned, numpy_dtype

Array = np.ndarray

SUB_BYTE_INTEGERS = frozenset({PrimitiveType.S4, PrimitiveType.U4, PrimitiveType.S2,
                               PrimitiveType.U2})

SIGNED, UNSIGNED = "signed", "unsigned"

_S4, _U4, _S2, _U2 = (PrimitiveType.S4, PrimitiveType.U4, PrimitiveType.S2, PrimitiveType.U2)
READINGS: dict[tuple[Op, PrimitiveType], str] = {
    (Op.SHIFT_RIGHT_LOGICAL, _S4): UNSIGNED, (Op.SHIFT_RIGHT_LOGICAL, _S2): UNSIGNED,
    (Op.SHIFT_RIGHT_ARITHMETIC, _U4): SIGNED, (Op.SHIFT_RIGHT_ARITHMETIC, _U2): SIGNED,
    (Op.CLZ, _S4): UNSIGNED, (Op.CLZ, _S2): UNSIGNED, (Op.POPULATION_COUNT, _S2): UNSIGNED,
}
"""(op, type) pairs whose operands XLA CPU reads against the type's signedness (the module
contract)."""


def is_sub_byte(t: PrimitiveType) -> bool:
    return t in SUB_BYTE_INTEGERS


def reading(opcode: Op, t: PrimitiveType) -> str:
    """How `opcode` reads operands of sub-byte type `t`: SIGNED or UNSIGNED."""
    return READINGS.get((opcode, t), UNSIGNED if is_unsigned(t) else SIGNED)


def carrier_type(how: str) -> PrimitiveType:
    """The 8-bit type an op reading operands `how` runs in."""
    return PrimitiveType.U8 if how == UNSIGNED else PrimitiveType.S8


def carried(x: Array, t: PrimitiveType, how: str) -> Array:
    """The values of the n-bit array x read `how`, as int8 (SIGNED) or uint8 (UNSIGNED)."""
    n = bit_width(t)
    pattern = np.ascontiguousarray(x).view(np.uint8) & np.uint8((1 << n) - 1)
    if how == UNSIGNED:
        return pattern
    shift = np.int8(8 - n)  # the n-bit sign bit to bit 7, then back with sign fill
    return np.right_shift(np.left_shift(pattern.view(np.int8), shift), shift)


def narrow(x: Array, t: PrimitiveType) -> Array:
    """The low n bits of the 8-bit integers x as type t (ml_dtypes' cast keeps them)."""
    return x.astype(numpy_dtype(t))


def lift(fn: Callable[..., Array], opcode: Op, t: PrimitiveType) -> Callable[..., Array]:
    """The n-bit op of the 8-bit op `fn` (resolved for carrier_type(reading(opcode, t)))."""
    how = reading(opcode, t)
    if opcode is Op.CLZ:
        offset = np.uint8(8 - bit_width(t))
        return lambda x: narrow(fn(carried(x, t, how)).view(np.uint8) - offset, t)

    def apply(*args: Array) -> Array:
        return narrow(fn(*(carried(a, t, how) for a in args)), t)
    return apply


def saturated_from_float(x: Array, t: PrimitiveType) -> Array:
    """Float -> n-bit integer: truncate toward zero, saturate at the range, NaN -> 0."""
    info = ml_dtypes.iinfo(numpy_dtype(t))
    wide = np.nan_to_num(x.astype(np.float64), nan=0.0)
    return np.clip(np.trunc(wide), info.min, info.max).astype(np.int8).astype(numpy_dtype(t))
