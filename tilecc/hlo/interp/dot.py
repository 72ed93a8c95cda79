"""dot (XLA's DotGeneral) for the vectorized interpreter.

Contract: `dot(inst, [lhs, rhs])` takes (B, *lhs dims) and (B, *rhs dims) and returns
(B, *result dims) with XLA's result order: batch dims, then lhs free dims, then rhs free
dims. Dimension numbers come from the verbatim attributes lhs_batch_dims,
lhs_contracting_dims, rhs_batch_dims, rhs_contracting_dims (absent = none). Integers
accumulate in the result type with wrap-around (sub-byte ones on their 8-bit carrier,
interp.sub_byte); floats accumulate in f32 (f64 for f64)
and round once to the result type (XLA CPU upcasts bf16 / f16 dots), an integer result
of float operands through the operand type (`round_via`); complex dots
accumulate in the result's complex type. Operand precision
configs are ignored.
"""

from __future__ import annotations

import re
import string
from typing import Callable

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp.elementwise import convert
from tilecc.hlo.interp.sub_byte import carried, carrier_type, is_sub_byte, narrow, reading
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import PrimitiveType, is_complex, is_floating, numpy_dtype

_INTS = re.compile(r"\d+")


def _dims(inst: HloInstruction, name: str) -> list[int]:
    return [int(v) for v in _INTS.findall(inst.attributes.get(name, ""))]


def round_via(wide: PrimitiveType, operand: PrimitiveType, result: PrimitiveType,
              x: np.ndarray) -> np.ndarray:
    """Float sums `x` (of type `wide`) of a dot or convolution rounded to its `result` type.
    An integer result of float operands is first rounded to the operand type, then
    converted (XLA CPU, measured with jaxlib 0.10.2: bf16 / f16 operands -> s32)."""
    if is_floating(result) or not is_floating(operand):
        return convert(x, wide, result)
    return convert(convert(x, wide, operand), operand, result)


def dot(inst: HloInstruction, operands: list[np.ndarray]) -> np.ndarray:
    return dot_op(inst)(operands[0], operands[1])


def dot_op(inst: HloInstruction) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """dot(lhs, rhs) for `inst` with the einsum spec and dtypes worked out once."""
    lhs_shape, rhs_shape = inst.operands[0].shape, inst.operands[1].shape
    lhs_batch, rhs_batch = _dims(inst, "lhs_batch_dims"), _dims(inst, "rhs_batch_dims")
    lhs_contract = _dims(inst, "lhs_contracting_dims")
    rhs_contract = _dims(inst, "rhs_contracting_dims")
    if len(lhs_batch) != len(rhs_batch) or len(lhs_contract) != len(rhs_contract):
        raise InterpError(f"{inst.name}: dot dimension numbers do not pair up")
    letters = iter(string.ascii_letters[1:])
    lhs_sub = [next(letters) for _ in range(lhs_shape.rank)]
    rhs_sub = [next(letters) for _ in range(rhs_shape.rank)]
    for l_dim, r_dim in zip(lhs_batch + lhs_contract, rhs_batch + rhs_contract):
        rhs_sub[r_dim] = lhs_sub[l_dim]
    lhs_free = [lhs_sub[d] for d in range(lhs_shape.rank) if d not in lhs_batch + lhs_contract]
    rhs_free = [rhs_sub[d] for d in range(rhs_shape.rank) if d not in rhs_batch + rhs_contract]
    out_sub = [lhs_sub[d] for d in lhs_batch] + lhs_free + rhs_free
    spec = f"a{''.join(lhs_sub)},a{''.join(rhs_sub)}->a{''.join(out_sub)}"
    result_type = inst.shape.element_type
    if is_complex(result_type):  # operands converted to the result's width (XLA promotes)
        dtype = numpy_dtype(result_type)
        return lambda lhs, rhs: np.einsum(spec, lhs.astype(dtype, copy=False),
                                          rhs.astype(dtype, copy=False))
    if is_floating(result_type) or is_floating(lhs_shape.element_type):
        wide = np.float64 if PrimitiveType.F64 in (result_type, lhs_shape.element_type) \
            else np.float32
        wide_type = PrimitiveType.F64 if wide is np.float64 else PrimitiveType.F32
        operand_type = lhs_shape.element_type
        return lambda lhs, rhs: round_via(wide_type, operand_type, result_type,
                                          np.einsum(spec, lhs.astype(wide, copy=False),
                                                    rhs.astype(wide, copy=False)))
    if lhs_shape.element_type == PrimitiveType.PRED:
        raise InterpError(f"{inst.name}: dot of pred operands is not supported by the interpreter")
    if is_sub_byte(result_type):  # on the 8-bit carrier, whose wrap keeps the low n bits
        how = reading(Op.DOT, result_type)
        carrier = numpy_dtype(carrier_type(how))
        return lambda lhs, rhs: narrow(np.einsum(
            spec, carried(lhs, lhs_shape.element_type, how),
            carried(rhs, rhs_shape.element_type, how), dtype=carrier), result_type)
    dtype = numpy_dtype(result_type)
    return lambda lhs, rhs: np.einsum(spec, lhs.astype(dtype, copy=False),
                                      rhs.astype(dtype, copy=False), dtype=dtype)
