"""Builders of the opcodes that call nothing: leaves (constant, iota), elementwise ops and
conversions, data movement, dot, tuples, rng-bit-generator.

Contract: each builder is a `Builder` (see values): (runner, instruction) -> Step, raising
InterpError for what the interpreter does not run (an element type it does not support, a
bad attribute). Elementwise semantics are elementwise.py's (XLA's), data movement is
shapes.py's.
"""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp import elementwise as ew
from tilecc.hlo.interp import shapes
from tilecc.hlo.interp.dot import dot_op
from tilecc.hlo.interp.flushed import flushed_operands
from tilecc.hlo.interp.rng import rng_bit_generator
from tilecc.hlo.interp.values import (DEAD_ARRAY_BYTES, Array, Lanes, Operands, Runner, Step,
                                      Value, dead_array, select_lanes)
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.literal import LiteralError, TupleLiteral, parse_tuple_literal
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import (bit_width, is_complex, is_floating, numpy_dtype,
                              primitive_type_name)


def unary_step(runner: Runner, inst: HloInstruction) -> Step:
    # the operand's type picks the function: abs of a complex returns the part type
    t = inst.operands[0].shape.element_type if inst.operands else inst.shape.element_type
    ew.check_supported_type(t, f"{inst.name} ({inst.opcode.mnemonic})")
    unary = ew.unary_op(inst.opcode, t, flushed_operands(inst))
    return lambda a, d: unary(a[0])


def binary_step(runner: Runner, inst: HloInstruction) -> Step:
    t = inst.shape.element_type
    ew.check_supported_type(t, f"{inst.name} ({inst.opcode.mnemonic})")
    flushed = flushed_operands(inst)
    binary = ew.binary_op(inst.opcode, t, flushed)
    into = ew.binary_op_into(inst.opcode, t, flushed)
    if into is None:
        return lambda a, d: binary(a[0], a[1])
    dims, dtype = inst.shape.dims, numpy_dtype(t)

    def step(a: Operands, d: Lanes) -> Value:
        # an operand no one else holds takes the result: no new buffer, and a while
        # loop's state stays in one buffer over its trips (small values: not worth a look)
        if a[0].nbytes >= DEAD_ARRAY_BYTES:
            for k in (0, 1):
                if dead_array(a, k) and a[k].shape[1:] == dims and a[k].dtype == dtype:
                    return into(a[0], a[1], a[k])
        return binary(a[0], a[1])
    return step


def constant_step(runner: Runner, inst: HloInstruction) -> Step:
    if inst.shape.is_tuple:
        return _tuple_constant_step(inst)
    literal = inst.literal
    if literal is None:
        raise InterpError(f"{inst.name}: constant without a value")
    cache: dict[int, Array] = {}  # lane count -> read-only broadcast of the literal

    def step(a: Operands, d: Lanes) -> Value:
        value = cache.get(d.count)
        if value is None:
            value = cache[d.count] = np.broadcast_to(literal, (d.count,) + literal.shape)
        return value
    return step


def _tuple_constant_step(inst: HloInstruction) -> Step:
    """A tuple constant `((1, 2), {3, 4})`: its arrays broadcast over the lanes."""
    if inst.literal_text is None or inst.literal_text == "{...}":
        raise InterpError(f"{inst.name}: constant without a value")
    try:
        value = parse_tuple_literal(inst.literal_text, inst.shape)
    except LiteralError as err:
        raise InterpError(f"{inst.name}: {err.message}") from None

    def lanes(v: TupleLiteral | Array, count: int) -> Value:
        if isinstance(v, tuple):
            return tuple(lanes(x, count) for x in v)
        return np.broadcast_to(v, (count,) + v.shape)
    return lambda a, d: lanes(value, d.count)


def iota_step(runner: Runner, inst: HloInstruction) -> Step:
    dims, dimension = inst.shape.dims, inst.iota_dimension or 0
    dtype = numpy_dtype(inst.shape.element_type)
    return lambda a, d: shapes.iota(d.count, dims, dimension, dtype)


def compare_step(runner: Runner, inst: HloInstruction) -> Step:
    t = inst.operands[0].shape.element_type
    ew.check_supported_type(t, f"{inst.name} (compare)")
    direction, kind = inst.comparison_direction or "", inst.comparison_type
    return lambda a, d: ew.compare(direction, kind, t, a[0], a[1])


def select_step(runner: Runner, inst: HloInstruction) -> Step:
    def step(a: Operands, d: Lanes) -> Value:
        pred, on_true, on_false = a
        if isinstance(on_true, tuple):
            return select_lanes(pred, on_true, on_false)
        if pred.ndim < on_true.ndim:  # a pred[] picks whole arrays (XLA accepts it)
            pred = pred.reshape(pred.shape + (1,) * (on_true.ndim - pred.ndim))
        return ew.select(pred, on_true, on_false)
    return step


def clamp_step(runner: Runner, inst: HloInstruction) -> Step:
    t = inst.shape.element_type
    ew.check_supported_type(t, f"{inst.name} (clamp)")

    def step(a: Operands, d: Lanes) -> Value:
        # a scalar bound is one value per lane: (lanes,) against x's (lanes, *dims)
        shape = a[1].shape
        low, x, high = (np.broadcast_to(v.reshape(v.shape + (1,) * (len(shape) - v.ndim)),
                                        shape) for v in a)
        return ew.clamp(t, low, x, high)
    return step


def convert_step(runner: Runner, inst: HloInstruction) -> Step:
    source = inst.operands[0].shape.element_type
    target = inst.shape.element_type
    ew.check_supported_type(source, f"{inst.name} (convert)")
    ew.check_supported_type(target, f"{inst.name} (convert)")
    return lambda a, d: ew.convert(a[0], source, target)


def bitcast_convert_step(runner: Runner, inst: HloInstruction) -> Step:
    # The raw bytes reinterpreted in memory order, as XLA CPU does on this little-endian
    # host: u32 -> u8[..., 4] puts the least significant byte first, u8[..., 4] -> u32
    # reads it back. Sub-byte types have no packed numpy layout to view.
    source, target = inst.operands[0].shape.element_type, inst.shape.element_type
    dtype = numpy_dtype(target)
    if min(bit_width(source), bit_width(target)) < 8 and \
            bit_width(source) != bit_width(target):
        raise InterpError(f"{inst.name}: bitcast-convert between "
                          f"{primitive_type_name(source)} and {primitive_type_name(target)}"
                          " (sub-byte widths) is not supported by the interpreter")
    dims = inst.shape.dims

    def step(a: Operands, d: Lanes) -> Value:
        x = np.ascontiguousarray(a[0])
        return x.view(dtype).reshape((x.shape[0],) + dims)
    return step


def reduce_precision_step(runner: Runner, inst: HloInstruction) -> Step:
    t = inst.shape.element_type
    try:
        exponent = int(inst.attributes["exponent_bits"])
        mantissa = int(inst.attributes["mantissa_bits"])
    except (KeyError, ValueError):
        raise InterpError(f"{inst.name}: reduce-precision needs integer exponent_bits "
                          "and mantissa_bits attributes") from None
    if exponent < 1 or mantissa < 0:
        raise InterpError(f"{inst.name}: reduce-precision to {exponent} exponent and "
                          f"{mantissa} mantissa bits (needs >= 1 and >= 0)")
    return lambda a, d: ew.reduce_precision(t, a[0], exponent, mantissa)


def real_imag_step(runner: Runner, inst: HloInstruction) -> Step:
    # XLA: of a complex, its part; of a float, the value itself (real) or zero (imag)
    source = inst.operands[0].shape.element_type
    if not (is_floating(source) or is_complex(source)):
        raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} of "
                          f"{primitive_type_name(source)} (needs a float or complex)")
    dtype = numpy_dtype(inst.shape.element_type)
    if inst.opcode is Op.REAL:
        return lambda a, d: np.real(a[0]).astype(dtype)
    return lambda a, d: np.imag(a[0]).astype(dtype)


def is_finite_step(runner: Runner, inst: HloInstruction) -> Step:
    t = inst.operands[0].shape.element_type
    return lambda a, d: ew.is_finite(t, a[0])


def rng_bit_generator_step(runner: Runner, inst: HloInstruction) -> Step:
    # XLA CPU also takes an array shape: the bits alone, as the tuple form's second part
    # (measured, jaxlib 0.10.2)
    parts = inst.shape.tuple_shapes if inst.shape.is_tuple else (None, inst.shape)
    bits = parts[1] if len(parts) == 2 else None
    if bits is None or not bits.is_array:
        raise InterpError(f"{inst.name}: rng-bit-generator returns (state, bits) or bits")
    algorithm = inst.attributes.get("algorithm", "rng_default")
    dims, dtype = bits.dims, numpy_dtype(bits.element_type)
    if dtype.itemsize * 8 != bit_width(bits.element_type):
        raise InterpError(f"{inst.name}: rng-bit-generator of "
                          f"{primitive_type_name(bits.element_type)} (sub-byte) is "
                          "not supported by the interpreter")
    with_state = inst.shape.is_tuple

    def step(a: Operands, d: Lanes) -> Value:
        state = np.asarray(a[0])
        result = rng_bit_generator(algorithm, state.reshape(state.shape[0], -1), dims, dtype)
        return result if with_state else result[1]
    return step


def data_movement_step(runner: Runner, inst: HloInstruction) -> Step:
    fn = shapes.HANDLERS[inst.opcode]
    return lambda a, d: fn(inst, a)


def reshape_step(runner: Runner, inst: HloInstruction) -> Step:
    dims = inst.shape.dims
    return lambda a, d: a[0].reshape((a[0].shape[0],) + dims)


def broadcast_step(runner: Runner, inst: HloInstruction) -> Step:
    to_result = shapes.broadcast_plan(inst.dimensions or (), inst.shape.dims)
    return lambda a, d: to_result(a[0])


def transpose_step(runner: Runner, inst: HloInstruction) -> Step:
    perm = [0] + [1 + p for p in inst.dimensions or ()]
    return lambda a, d: np.transpose(a[0], perm)


def dot_step(runner: Runner, inst: HloInstruction) -> Step:
    product = dot_op(inst)
    return lambda a, d: product(a[0], a[1])


def tuple_step(runner: Runner, inst: HloInstruction) -> Step:
    return lambda a, d: tuple(a)


def get_tuple_element_step(runner: Runner, inst: HloInstruction) -> Step:
    index = inst.tuple_index

    def step(a: Operands, d: Lanes) -> Value:
        value = a[0]
        if not isinstance(value, tuple) or index is None:
            raise InterpError(f"{inst.name}: get-tuple-element of a non-tuple value")
        return value[index]
    return step


def first_operand_step(runner: Runner, inst: HloInstruction) -> Step:
    """copy and optimization-barrier: the operand's value (an array or a tuple), which no
    step ever writes into, so it needs no copy."""
    return lambda a, d: a[0]
