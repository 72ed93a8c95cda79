"""Shape rules of the HLO verifier, one per opcode (XLA's ShapeVerifier rules).

Contract: `SHAPE_RULES[opcode](inst, ctx)` returns None when `inst`'s shape and attributes
fit its operands and raises VerifyError("computation/instruction (opcode): what is wrong")
otherwise; `check_shape(inst, ctx)` applies the operand count of fixed-arity opcodes and
then the opcode's rule. Opcodes without a rule are accepted as read (their shapes are
XLA's business). `RuleContext` carries the module (device counts for collective group
sizes) and the options of XLA's verifier that change a rule: `allow_mixed_precision`
lets a reducer's parameters have another floating type than the data (XLA's
HloVerifierOpts::allow_mixed_precision).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tilecc.errors import VerifyError
from tilecc.hlo.batch_norm_shapes import batch_norm_problem
from tilecc.hlo.builders import slice_shape
from tilecc.hlo.ir import HloInstruction, HloModule
from tilecc.hlo.literal import LiteralError, parse_tuple_literal
from tilecc.hlo.op_configs import CONFIGURED, read_config
from tilecc.hlo.opcodes import (ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, TYPE_PRESERVING_BINARY,
                                TYPE_PRESERVING_UNARY, HloOpcode)
from tilecc.hlo.replica_groups import participants_per_group
from tilecc.hlo.types import (PrimitiveType, Shape, bit_width, compatible, is_complex,
                              is_floating, primitive_type_name)

O = HloOpcode


@dataclass(frozen=True, slots=True)
class RuleContext:
    module: HloModule
    allow_mixed_precision: bool = False


def fail(inst: HloInstruction, message: str) -> VerifyError:
    comp = inst.parent.name if inst.parent is not None else "<detached>"
    return VerifyError(f"{comp}/{inst.name} ({inst.opcode.mnemonic}): {message}")


def check_shape(inst: HloInstruction, ctx: RuleContext) -> None:
    """The operand count of a fixed-arity opcode, then the opcode's rule."""
    arity = inst.opcode.arity
    if arity is not None and len(inst.operands) != arity:
        raise fail(inst, f"takes {arity} operands, has {len(inst.operands)}")
    rule = SHAPE_RULES.get(inst.opcode)
    if rule is not None:
        rule(inst, ctx)


def _same_dims(inst: HloInstruction, a: Shape, b: Shape, what: str) -> None:
    if a.dims != b.dims:
        raise fail(inst, f"{what}: {a.to_text()} and {b.to_text()} have different dimensions")


def bitcast_convert_dims(operand: Shape, result_type: PrimitiveType) -> tuple[int, ...]:
    """Result dims of bitcast-convert (XLA's InferBitcastConvertShape): equal bit widths keep
    the dims; a wider operand gains a trailing dim of width ratio; a narrower operand's last
    dim must be the ratio and is dropped. ValueError when the widths do not divide."""
    src, dst = bit_width(operand.element_type), bit_width(result_type)
    if src == dst:
        return operand.dims
    if max(src, dst) % min(src, dst):
        raise ValueError(f"bit widths {src} and {dst} do not divide each other")
    if src > dst:
        return operand.dims + (src // dst,)
    if not operand.dims or operand.dims[-1] != dst // src:
        raise ValueError(f"the operand's last dimension must be {dst // src} (= {dst} / "
                         f"{src} bits)")
    return operand.dims[:-1]


def _verify_bitcast_convert(inst: HloInstruction, operand: Shape, shape: Shape) -> None:
    if not (operand.is_array and shape.is_array):
        raise fail(inst, f"bitcast-convert needs arrays, got {operand.to_text()} -> "
                          f"{shape.to_text()}")
    try:
        dims = bitcast_convert_dims(operand, shape.element_type)
    except ValueError as err:
        raise fail(inst, f"cannot bitcast-convert {operand.to_text()} to "
                          f"{shape.to_text()}: {err}") from None
    if shape.dims != dims:
        raise fail(inst, f"bitcast-convert of {operand.to_text()} to "
                          f"{primitive_type_name(shape.element_type)} has dims {list(dims)}, "
                          f"result is {shape.to_text()}")


def _component_type(t: PrimitiveType) -> PrimitiveType:
    """The element type of a complex's real and imaginary parts; any other type itself."""
    return {PrimitiveType.C64: PrimitiveType.F32, PrimitiveType.C128: PrimitiveType.F64}.get(t, t)


def _expect_shape(inst: HloInstruction, expected: Shape) -> None:
    if not compatible(inst.shape, expected):
        raise fail(inst, f"shape is {inst.shape.to_text()}, expected {expected.to_text()}")


def _verify_reducer(inst: HloInstruction, ctx: RuleContext, n_inputs: int,
                    element_types: list[PrimitiveType]) -> None:
    comp = inst.to_apply
    if comp is None:
        raise fail(inst, "has no to_apply computation")
    if len(comp.parameters) != 2 * n_inputs:
        raise fail(inst, f"reducer {comp.name} takes {len(comp.parameters)} parameters, "
                   f"expected {2 * n_inputs}")
    for i, p in enumerate(comp.parameters):
        et = element_types[i % n_inputs]
        pt = p.shape.element_type
        mixed = ctx.allow_mixed_precision and is_floating(pt) and is_floating(et)
        if p.shape.rank != 0 or (pt != et and not mixed):
            raise fail(inst, f"reducer {comp.name} parameter {i} is {p.shape.to_text()}, "
                       f"expected a {et.name.lower()} scalar")


def _group_size(inst: HloInstruction, module: HloModule) -> int:
    return participants_per_group(inst.replica_groups, inst.channel_id,
                                  inst.use_global_device_ids, module.replica_count,
                                  module.num_partitions)


def _verify_collective_mode(inst: HloInstruction, uniform: bool = True) -> None:
    """use_global_device_ids needs a channel; groups are disjoint and, when `uniform`, of one
    size (XLA's CheckReplicaGroups: all-reduce alone may have groups of different sizes)."""
    if inst.use_global_device_ids and inst.channel_id is None:
        raise fail(inst, "use_global_device_ids=true needs a channel_id")
    try:
        groups = inst.replica_groups.groups() if inst.replica_groups is not None else None
    except ValueError as err:  # an iota form whose sizes disagree
        raise fail(inst, str(err)) from None
    if groups:
        sizes = {len(g) for g in groups}
        if uniform and len(sizes) != 1:
            raise fail(inst, f"replica groups have different sizes {sorted(sizes)}")
        flat = [i for g in groups for i in g]
        if len(set(flat)) != len(flat):
            raise fail(inst, "a replica id appears in more than one group")


def _verify_broadcast(inst: HloInstruction, ctx: RuleContext) -> None:
    src, out = inst.operands[0].shape, inst.shape
    dims = inst.dimensions or ()
    if len(dims) != src.rank:
        raise fail(inst, f"{len(dims)} dimensions for an operand of rank {src.rank}")
    if out.element_type != src.element_type:
        raise fail(inst, "broadcast changes the element type")
    if len(set(dims)) != len(dims):
        raise fail(inst, f"dimensions {list(dims)} repeat")
    for i, d in enumerate(dims):
        if not 0 <= d < out.rank or out.dims[d] != src.dims[i]:
            raise fail(inst, f"operand dimension {i} (size {src.dims[i]}) does not match "
                        f"result dimension {d} of {out.to_text()}")


def _verify_concatenate(inst: HloInstruction, ctx: RuleContext) -> None:
    dims = inst.dimensions or ()
    if len(dims) != 1:
        raise fail(inst, "concatenate needs exactly one dimension")
    d = dims[0]
    first = inst.operands[0].shape
    if not 0 <= d < first.rank:
        raise fail(inst, f"dimension {d} is out of range for {first.to_text()}")
    total = 0
    for o in inst.operands:
        s = o.shape
        if s.element_type != first.element_type or s.rank != first.rank or any(
                a != b for i, (a, b) in enumerate(zip(s.dims, first.dims)) if i != d):
            raise fail(inst, f"operand {o.name} ({s.to_text()}) does not fit {first.to_text()}")
        total += s.dims[d]
    out = list(first.dims)
    out[d] = total
    _expect_shape(inst, Shape.array(first.element_type, out))


def _verify_reduce(inst: HloInstruction, ctx: RuleContext) -> None:
    ops = inst.operands
    if len(ops) % 2 or not ops:
        raise fail(inst, "reduce takes N inputs and N init values")
    n = len(ops) // 2
    inputs, inits = ops[:n], ops[n:]
    first = inputs[0].shape
    dims = inst.dimensions or ()
    if len(set(dims)) != len(dims) or any(not 0 <= d < first.rank for d in dims):
        raise fail(inst, f"dimensions {list(dims)} do not fit rank {first.rank}")
    for i, init in zip(inputs, inits):
        if i.shape.dims != first.dims:
            raise fail(inst, f"inputs {inputs[0].name} and {i.name} differ in dimensions")
        if init.shape.rank != 0 or init.shape.element_type != i.shape.element_type:
            raise fail(inst, f"init {init.name} ({init.shape.to_text()}) must be a scalar of "
                        f"{i.name}'s type")
    keep = [s for k, s in enumerate(first.dims) if k not in dims]
    outs = [Shape.array(i.shape.element_type, keep) for i in inputs]
    _expect_shape(inst, outs[0] if n == 1 else Shape.tuple(outs))
    _verify_reducer(inst, ctx, n, [i.shape.element_type for i in inputs])


def _verify_gather_scatter(inst: HloInstruction, ctx: RuleContext) -> None:
    """XLA's ShapeVerifier::HandleAllGather / HandleReduceScatter: operand k pairs with the
    result (one operand) or its element k; the shard count is the ratio of pair 0's
    dimensions (rounded up), must equal the group size unless that is 1, and sizes every
    pair's dimension."""
    _verify_collective_mode(inst)
    gathers = inst.opcode is O.ALL_GATHER
    pairs = _operand_result_pairs(inst)
    dims = inst.dimensions or ()
    for src, out in pairs:
        if len(dims) != 1 or not 0 <= dims[0] < src.rank:
            raise fail(inst, f"dimensions {list(dims)} must name one dimension of "
                       f"{src.to_text()}")
        d = dims[0]
        if out.element_type != src.element_type or out.rank != src.rank or any(
                a != b for i, (a, b) in enumerate(zip(out.dims, src.dims)) if i != d):
            raise fail(inst, f"shape {out.to_text()} does not fit operand {src.to_text()}")
    if not gathers:
        _verify_reducer(inst, ctx, 1, [pairs[0][0].element_type])
    d = dims[0]
    big, small = (pairs[0][1], pairs[0][0]) if gathers else pairs[0]
    if small.dims[d] == 0:
        raise fail(inst, f"dimension {d} of {small.to_text()} is 0: no shard count follows")
    shards = -(-big.dims[d] // small.dims[d])
    size = _group_size(inst, ctx.module)
    if shards < 1 or size != 1 and shards != size:  # XLA does not size a one-member group
        raise fail(inst, f"{pairs[0][0].to_text()} and {pairs[0][1].to_text()} make "
                   f"{shards} shards along dimension {d}, the groups have {size} members")
    for src, out in pairs:
        if gathers and out.dims[d] != src.dims[d] * shards:
            raise fail(inst, f"gathering dimension {d} of {src.to_text()} over {shards} "
                       f"participants gives {src.dims[d] * shards}, not {out.dims[d]}")
        if not gathers and (src.dims[d] % shards or src.dims[d] // shards != out.dims[d]):
            raise fail(inst, f"scattering dimension {d} of size {src.dims[d]} over {shards} "
                       f"participants does not give {out.dims[d]}")


def _operand_result_pairs(inst: HloInstruction) -> list[tuple[Shape, Shape]]:
    """(operand k's shape, result element k's shape) of a collective with a result per
    operand: the result itself for one operand, else a tuple of one array per operand."""
    shapes = [op.shape for op in inst.operands]
    if not shapes:
        raise fail(inst, "takes at least one operand")
    results = [inst.shape] if len(shapes) == 1 else list(inst.shape.tuple_shapes) \
        if inst.shape.is_tuple else []
    if len(results) != len(shapes):
        raise fail(inst, f"shape {inst.shape.to_text()} has no result per operand "
                   f"({len(shapes)} operands)")
    for shape in shapes + results:
        if not shape.is_array:
            raise fail(inst, f"{shape.to_text()} is not an array")
    return list(zip(shapes, results))


def _elementwise_unary(inst: HloInstruction, ctx: RuleContext) -> None:
    op, shape, operand = inst.opcode, inst.shape, inst.operands[0].shape
    _same_dims(inst, shape, operand, "result and operand")
    operand_type = operand.element_type
    if op in TYPE_PRESERVING_UNARY:
        # XLA: abs of a complex is its magnitude, every other such op keeps the type.
        kept = _component_type(operand_type) if op is O.ABS else operand_type
        if shape.element_type != kept:
            raise fail(inst, f"result type {shape.to_text()} differs from operand "
                       f"{operand.to_text()}")


def _real_imag_is_finite(inst: HloInstruction, ctx: RuleContext) -> None:
    # XLA's shape inference: is-finite takes a float and gives pred; real / imag take a
    # complex (giving its component type) or a float (giving the same type).
    op, shape, operand = inst.opcode, inst.shape, inst.operands[0].shape
    _same_dims(inst, shape, operand, "result and operand")
    operand_type = operand.element_type
    if not (is_floating(operand_type) or (op is not O.IS_FINITE and is_complex(operand_type))):
        raise fail(inst, f"operand {operand.to_text()} is not "
                   f"{'a float' if op is O.IS_FINITE else 'a float or complex'}")
    result_type = PrimitiveType.PRED if op is O.IS_FINITE else _component_type(operand_type)
    if shape.element_type != result_type:
        raise fail(inst, f"result type {shape.to_text()} should have element type "
                   f"{result_type.name.lower()} for operand {operand.to_text()}")


def _elementwise_binary(inst: HloInstruction, ctx: RuleContext) -> None:
    op, shape = inst.opcode, inst.shape
    a, b = inst.operands[0].shape, inst.operands[1].shape
    _same_dims(inst, a, b, "operands")
    _same_dims(inst, shape, a, "result and operands")
    if op is O.COMPARE:
        if shape.element_type != PrimitiveType.PRED:
            raise fail(inst, "compare must produce pred")
        if inst.comparison_direction is None:
            raise fail(inst, "compare has no direction")
    if (op in TYPE_PRESERVING_BINARY or op is O.COMPARE) and a.element_type != b.element_type:
        raise fail(inst, f"operand types differ: {a.to_text()} vs {b.to_text()}")
    if op in TYPE_PRESERVING_BINARY and shape.element_type != a.element_type:
        raise fail(inst, f"result type differs from operands ({a.to_text()})")


def _bitcast_convert(inst: HloInstruction, ctx: RuleContext) -> None:
    _verify_bitcast_convert(inst, inst.operands[0].shape, inst.shape)


def _select(inst: HloInstruction, ctx: RuleContext) -> None:
    pred, a, b = (o.shape for o in inst.operands)
    if pred.element_type != PrimitiveType.PRED:
        raise fail(inst, "the first operand must be pred")
    if pred.rank != 0:
        _same_dims(inst, pred, inst.shape, "predicate and result")
    _expect_shape(inst, a)
    if not compatible(a, b):
        raise fail(inst, f"branches differ: {a.to_text()} vs {b.to_text()}")


def _clamp(inst: HloInstruction, ctx: RuleContext) -> None:
    lo, x, hi = (o.shape for o in inst.operands)
    _expect_shape(inst, x)
    for bound in (lo, hi):
        if bound.element_type != x.element_type or (bound.rank and bound.dims != x.dims):
            raise fail(inst, f"bound {bound.to_text()} does not fit {x.to_text()}")


def _reshape(inst: HloInstruction, ctx: RuleContext) -> None:
    shape, src = inst.shape, inst.operands[0].shape
    if shape.element_type != src.element_type:
        raise fail(inst, "reshape changes the element type")
    if shape.element_count() != src.element_count():
        raise fail(inst, f"reshape of {src.element_count()} elements to "
                   f"{shape.element_count()} elements")


def _slice(inst: HloInstruction, ctx: RuleContext) -> None:
    if inst.slice_starts is None or inst.slice_limits is None:
        raise fail(inst, "slice has no bounds")
    strides = inst.slice_strides or (1,) * len(inst.slice_starts)
    try:
        expected = slice_shape(inst.operands[0].shape, inst.slice_starts, inst.slice_limits,
                               strides)
    except VerifyError as err:
        raise fail(inst, str(err)) from None
    _expect_shape(inst, expected)


def _transpose(inst: HloInstruction, ctx: RuleContext) -> None:
    perm = inst.dimensions or ()
    src = inst.operands[0].shape
    if sorted(perm) != list(range(src.rank)):
        raise fail(inst, f"dimensions {list(perm)} are not a permutation of rank {src.rank}")
    _expect_shape(inst, Shape.array(src.element_type, [src.dims[p] for p in perm]))


def _all_reduce(inst: HloInstruction, ctx: RuleContext) -> None:
    ops = inst.operands
    if not ops:
        raise fail(inst, "takes at least one operand")
    _verify_collective_mode(inst, uniform=False)
    _verify_reducer(inst, ctx, 1, [o.shape.element_type for o in ops[:1]])
    _expect_shape(inst, ops[0].shape if len(ops) == 1 else Shape.tuple([o.shape for o in ops]))


def _tuple(inst: HloInstruction, ctx: RuleContext) -> None:
    _expect_shape(inst, Shape.tuple([o.shape for o in inst.operands]))


def _get_tuple_element(inst: HloInstruction, ctx: RuleContext) -> None:
    src = inst.operands[0].shape
    idx = inst.tuple_index
    if not src.is_tuple or idx is None or not 0 <= idx < len(src.tuple_shapes):
        raise fail(inst, f"index {idx} is not an element of {src.to_text()}")
    _expect_shape(inst, src.tuple_shapes[idx])


def _parameter(inst: HloInstruction, ctx: RuleContext) -> None:
    comp = inst.parent
    n = inst.parameter_number
    if comp is not None and (n is None or n >= len(comp.parameters)
                             or comp.parameters[n] is not inst):
        raise fail(inst, f"parameter number {n} is not registered in {comp.name}")


def _constant(inst: HloInstruction, ctx: RuleContext) -> None:
    shape = inst.shape
    if shape.is_tuple and inst.literal_text is not None:
        if inst.literal_text == "{...}":
            return
        try:
            parse_tuple_literal(inst.literal_text, shape)
        except LiteralError as err:
            raise fail(inst, f"no value in '{inst.literal_text[:40]}': {err.message}") from None
        return
    if not shape.is_array:
        raise fail(inst, "constants must have an array or tuple shape")
    if inst.literal_text is None and inst._literal is None:
        raise fail(inst, "constant has no value")
    if inst.literal_text != "{...}" and (lit := inst.literal) is not None \
            and tuple(lit.shape) != shape.dims:
        raise fail(inst, f"literal of shape {list(lit.shape)} for {shape.to_text()}")


def _iota(inst: HloInstruction, ctx: RuleContext) -> None:
    shape, dim = inst.shape, inst.iota_dimension
    if not shape.is_array or shape.rank == 0 or dim is None or not 0 <= dim < shape.rank:
        raise fail(inst, f"iota_dimension {dim} does not fit {shape.to_text()}")


def _device_id(inst: HloInstruction, ctx: RuleContext) -> None:
    _expect_shape(inst, Shape.array(PrimitiveType.U32, ()))


def _configured(inst: HloInstruction, ctx: RuleContext) -> None:
    """fft, triangular-solve, scan: their attributes read against their shapes (op_configs)."""
    try:
        read_config(inst, ctx.allow_mixed_precision)
    except ValueError as err:
        raise fail(inst, str(err)) from None


def _batch_norm(inst: HloInstruction, ctx: RuleContext) -> None:
    if (problem := batch_norm_problem(inst)) is not None:
        raise fail(inst, problem)


Rule = Callable[[HloInstruction, RuleContext], None]

SHAPE_RULES: dict[HloOpcode, Rule] = {
    **{op: _elementwise_unary for op in ELEMENTWISE_UNARY},
    **{op: _elementwise_binary for op in ELEMENTWISE_BINARY},
    O.BITCAST_CONVERT: _bitcast_convert,
    O.IS_FINITE: _real_imag_is_finite, O.REAL: _real_imag_is_finite,
    O.IMAG: _real_imag_is_finite,
    O.SELECT: _select, O.CLAMP: _clamp, O.RESHAPE: _reshape, O.BROADCAST: _verify_broadcast,
    O.SLICE: _slice, O.CONCATENATE: _verify_concatenate, O.TRANSPOSE: _transpose,
    O.REDUCE: _verify_reduce, O.ALL_REDUCE: _all_reduce,
    O.ALL_GATHER: _verify_gather_scatter, O.REDUCE_SCATTER: _verify_gather_scatter,
    O.TUPLE: _tuple, O.GET_TUPLE_ELEMENT: _get_tuple_element, O.PARAMETER: _parameter,
    O.CONSTANT: _constant, O.IOTA: _iota,
    O.REPLICA_ID: _device_id, O.PARTITION_ID: _device_id,
    **{op: _configured for op in CONFIGURED},
    O.BATCH_NORM_TRAINING: _batch_norm, O.BATCH_NORM_INFERENCE: _batch_norm,
    O.BATCH_NORM_GRAD: _batch_norm,
}
"""Opcode -> its shape rule (see the module contract)."""
