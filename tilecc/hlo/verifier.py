"""Verifier: structural invariants and shape rules for the opcodes tilecc builds or runs.

Contract: `verify_module(module)` returns None for a valid module and otherwise raises
VerifyError("computation/instruction: what is wrong"). It checks
- structure: an entry exists; each computation has a root among its instructions and
  parameters numbered 0..n-1; operands and control predecessors live in the same
  computation; use lists agree with operand lists; instruction names are unique;
  called computations belong to the module, the entry is never called and no computation
  calls itself, directly or through others (hlo/run_limits.py); a computation
  called by async-start / -update / -done holds only its parameters and root (XLA's rule);
- shapes (XLA's ShapeVerifier rules) for elementwise ops, compare, select, clamp, convert,
  reshape, broadcast, slice, concatenate, transpose, reduce, all-reduce, all-gather,
  reduce-scatter, tuple, get-tuple-element, parameter, constant, iota, replica-id and
  partition-id, plus the collective group mode ((no channel, use_global_device_ids) is
  invalid) and the arity of reducer computations.
Other opcodes are accepted as read (their shapes are XLA's business).
"""

from __future__ import annotations

from tilecc.errors import VerifyError
from tilecc.hlo.builders import slice_shape
from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule
from tilecc.hlo.opcodes import (ASYNC, ELEMENTWISE_BINARY, ELEMENTWISE_UNARY,
                                TYPE_PRESERVING_BINARY, TYPE_PRESERVING_UNARY, HloOpcode)
from tilecc.hlo.replica_groups import participants_per_group
from tilecc.hlo.run_limits import check_call_graph
from tilecc.hlo.types import (PrimitiveType, Shape, bit_width, compatible, is_complex,
                              is_floating, primitive_type_name)

O = HloOpcode


def verify_module(module: HloModule) -> None:
    """Raise VerifyError naming the first broken instruction; see the module docstring."""
    if module.entry is None or module.entry not in module.computations:
        raise VerifyError(f"module {module.name}: no entry computation")
    comps = set(map(id, module.computations))
    names: dict[str, str] = {}
    for comp in module.computations:
        _verify_structure(comp, comps, module, names)
    check_call_graph(module)
    for comp in module.computations:
        for inst in comp.instructions:
            _verify_shape(inst, module)


def _fail(inst: HloInstruction, message: str) -> VerifyError:
    comp = inst.parent.name if inst.parent is not None else "<detached>"
    return VerifyError(f"{comp}/{inst.name} ({inst.opcode.mnemonic}): {message}")


def _verify_structure(comp: HloComputation, comps: set[int], module: HloModule,
                      names: dict[str, str]) -> None:
    insts = comp.instructions
    if not insts:
        raise VerifyError(f"computation {comp.name} has no instructions")
    if comp.root is None or comp.root.parent is not comp:
        raise VerifyError(f"computation {comp.name}: the root is not one of its instructions")
    for i, param in enumerate(comp.parameters):
        if param is None or param.parameter_number != i or param.parent is not comp:
            raise VerifyError(f"computation {comp.name}: parameter {i} is missing or misnumbered")
    for inst in insts:
        if inst.name in names:
            raise _fail(inst, f"name also used in computation {names[inst.name]}")
        names[inst.name] = comp.name
        for op in inst.operands:
            if op.parent is not comp:
                raise _fail(inst, f"operand {op.name} is not in computation {comp.name}")
            if inst not in op.users:
                raise _fail(inst, f"missing from the users of its operand {op.name}")
        for user in inst.users:
            if inst not in user.operands:
                raise _fail(inst, f"lists {user.name} as a user, but is not its operand")
        for pred in inst.control_predecessors:
            if pred.parent is not comp:
                raise _fail(inst, f"control predecessor {pred.name} is in another computation")
        for callee in inst.called_computations():
            if id(callee) not in comps:
                raise _fail(inst, f"calls {callee.name}, which is not in the module")
            if callee is module.entry:
                raise _fail(inst, "calls the entry computation")
            if inst.opcode in ASYNC:
                _verify_async_computation(inst, callee)


def _verify_async_computation(inst: HloInstruction, callee: HloComputation) -> None:
    """XLA's verifier: an async op's computation holds only its parameters and root."""
    extra = [i.name for i in callee.instructions
             if i is not callee.root and i.opcode is not O.PARAMETER]
    if extra:
        raise _fail(inst, f"asynchronous computation {callee.name} expected to contain only "
                          f"the root and parameter instructions, also has {', '.join(extra[:5])}"
                          + (" ..." if len(extra) > 5 else ""))


def _same_dims(inst: HloInstruction, a: Shape, b: Shape, what: str) -> None:
    if a.dims != b.dims:
        raise _fail(inst, f"{what}: {a.to_text()} and {b.to_text()} have different dimensions")


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
        raise _fail(inst, f"bitcast-convert needs arrays, got {operand.to_text()} -> "
                          f"{shape.to_text()}")
    try:
        dims = bitcast_convert_dims(operand, shape.element_type)
    except ValueError as err:
        raise _fail(inst, f"cannot bitcast-convert {operand.to_text()} to "
                          f"{shape.to_text()}: {err}") from None
    if shape.dims != dims:
        raise _fail(inst, f"bitcast-convert of {operand.to_text()} to "
                          f"{primitive_type_name(shape.element_type)} has dims {list(dims)}, "
                          f"result is {shape.to_text()}")


def _component_type(t: PrimitiveType) -> PrimitiveType:
    """The element type of a complex's real and imaginary parts; any other type itself."""
    return {PrimitiveType.C64: PrimitiveType.F32, PrimitiveType.C128: PrimitiveType.F64}.get(t, t)


def _expect_shape(inst: HloInstruction, expected: Shape) -> None:
    if not compatible(inst.shape, expected):
        raise _fail(inst, f"shape is {inst.shape.to_text()}, expected {expected.to_text()}")


def _verify_reducer(inst: HloInstruction, n_inputs: int, element_types: list[PrimitiveType]) -> None:
    comp = inst.to_apply
    if comp is None:
        raise _fail(inst, "has no to_apply computation")
    if len(comp.parameters) != 2 * n_inputs:
        raise _fail(inst, f"reducer {comp.name} takes {len(comp.parameters)} parameters, "
                    f"expected {2 * n_inputs}")
    for i, p in enumerate(comp.parameters):
        et = element_types[i % n_inputs]
        if p.shape.rank != 0 or p.shape.element_type != et:
            raise _fail(inst, f"reducer {comp.name} parameter {i} is {p.shape.to_text()}, "
                        f"expected a {et.name.lower()} scalar")


def _group_size(inst: HloInstruction, module: HloModule) -> int:
    return participants_per_group(inst.replica_groups, inst.channel_id,
                                  inst.use_global_device_ids, module.replica_count,
                                  module.num_partitions)


def _verify_collective_mode(inst: HloInstruction) -> None:
    if inst.use_global_device_ids and inst.channel_id is None:
        raise _fail(inst, "use_global_device_ids=true needs a channel_id")
    groups = inst.replica_groups.groups() if inst.replica_groups is not None else None
    if groups:
        sizes = {len(g) for g in groups}
        if len(sizes) != 1:
            raise _fail(inst, f"replica groups have different sizes {sorted(sizes)}")
        flat = [i for g in groups for i in g]
        if len(set(flat)) != len(flat):
            raise _fail(inst, "a replica id appears in more than one group")


def _verify_shape(inst: HloInstruction, module: HloModule) -> None:
    op = inst.opcode
    ops = inst.operands
    shape = inst.shape
    if op.arity is not None and len(ops) != op.arity:
        raise _fail(inst, f"takes {op.arity} operands, has {len(ops)}")
    if op is O.BITCAST_CONVERT:
        _verify_bitcast_convert(inst, ops[0].shape, shape)
    elif op in ELEMENTWISE_UNARY:
        _same_dims(inst, shape, ops[0].shape, "result and operand")
        operand_type = ops[0].shape.element_type
        if op in TYPE_PRESERVING_UNARY:
            # XLA: abs of a complex is its magnitude, every other such op keeps the type.
            kept = _component_type(operand_type) if op is O.ABS else operand_type
            if shape.element_type != kept:
                raise _fail(inst, f"result type {shape.to_text()} differs from operand "
                            f"{ops[0].shape.to_text()}")
        elif op is O.IS_FINITE or op in (O.REAL, O.IMAG):
            # XLA's shape inference: is-finite takes a float and gives pred; real / imag take
            # a complex (giving its component type) or a float (giving the same type).
            if not (is_floating(operand_type) or (op is not O.IS_FINITE
                                                  and is_complex(operand_type))):
                raise _fail(inst, f"operand {ops[0].shape.to_text()} is not "
                            f"{'a float' if op is O.IS_FINITE else 'a float or complex'}")
            result_type = (PrimitiveType.PRED if op is O.IS_FINITE
                           else _component_type(operand_type))
            if shape.element_type != result_type:
                raise _fail(inst, f"result type {shape.to_text()} should have element type "
                            f"{result_type.name.lower()} for operand {ops[0].shape.to_text()}")
    elif op in ELEMENTWISE_BINARY:
        _same_dims(inst, ops[0].shape, ops[1].shape, "operands")
        _same_dims(inst, shape, ops[0].shape, "result and operands")
        if op is O.COMPARE:
            if shape.element_type != PrimitiveType.PRED:
                raise _fail(inst, "compare must produce pred")
            if inst.comparison_direction is None:
                raise _fail(inst, "compare has no direction")
        if op in TYPE_PRESERVING_BINARY or op is O.COMPARE:
            if ops[0].shape.element_type != ops[1].shape.element_type:
                raise _fail(inst, f"operand types differ: {ops[0].shape.to_text()} vs "
                            f"{ops[1].shape.to_text()}")
        if op in TYPE_PRESERVING_BINARY and shape.element_type != ops[0].shape.element_type:
            raise _fail(inst, f"result type differs from operands ({ops[0].shape.to_text()})")
    elif op is O.SELECT:
        pred, a, b = (o.shape for o in ops)
        if pred.element_type != PrimitiveType.PRED:
            raise _fail(inst, "the first operand must be pred")
        if pred.rank != 0:
            _same_dims(inst, pred, shape, "predicate and result")
        _expect_shape(inst, a)
        if not compatible(a, b):
            raise _fail(inst, f"branches differ: {a.to_text()} vs {b.to_text()}")
    elif op is O.CLAMP:
        lo, x, hi = (o.shape for o in ops)
        _expect_shape(inst, x)
        for bound in (lo, hi):
            if bound.element_type != x.element_type or (bound.rank and bound.dims != x.dims):
                raise _fail(inst, f"bound {bound.to_text()} does not fit {x.to_text()}")
    elif op is O.RESHAPE:
        if shape.element_type != ops[0].shape.element_type:
            raise _fail(inst, "reshape changes the element type")
        if shape.element_count() != ops[0].shape.element_count():
            raise _fail(inst, f"reshape of {ops[0].shape.element_count()} elements to "
                        f"{shape.element_count()} elements")
    elif op is O.BROADCAST:
        _verify_broadcast(inst)
    elif op is O.SLICE:
        if inst.slice_starts is None or inst.slice_limits is None:
            raise _fail(inst, "slice has no bounds")
        strides = inst.slice_strides or (1,) * len(inst.slice_starts)
        try:
            expected = slice_shape(ops[0].shape, inst.slice_starts, inst.slice_limits, strides)
        except VerifyError as err:
            raise _fail(inst, str(err)) from None
        _expect_shape(inst, expected)
    elif op is O.CONCATENATE:
        _verify_concatenate(inst)
    elif op is O.TRANSPOSE:
        perm = inst.dimensions or ()
        src = ops[0].shape
        if sorted(perm) != list(range(src.rank)):
            raise _fail(inst, f"dimensions {list(perm)} are not a permutation of rank {src.rank}")
        _expect_shape(inst, Shape.array(src.element_type, [src.dims[p] for p in perm]))
    elif op is O.REDUCE:
        _verify_reduce(inst)
    elif op is O.ALL_REDUCE:
        _verify_collective_mode(inst)
        _verify_reducer(inst, 1, [o.shape.element_type for o in ops[:1]])
        expected = ops[0].shape if len(ops) == 1 else Shape.tuple([o.shape for o in ops])
        _expect_shape(inst, expected)
    elif op in (O.ALL_GATHER, O.REDUCE_SCATTER):
        _verify_gather_scatter(inst, module)
    elif op is O.TUPLE:
        _expect_shape(inst, Shape.tuple([o.shape for o in ops]))
    elif op is O.GET_TUPLE_ELEMENT:
        src = ops[0].shape
        idx = inst.tuple_index
        if not src.is_tuple or idx is None or not 0 <= idx < len(src.tuple_shapes):
            raise _fail(inst, f"index {idx} is not an element of {src.to_text()}")
        _expect_shape(inst, src.tuple_shapes[idx])
    elif op is O.PARAMETER:
        comp = inst.parent
        n = inst.parameter_number
        if comp is not None and (n is None or n >= len(comp.parameters)
                                 or comp.parameters[n] is not inst):
            raise _fail(inst, f"parameter number {n} is not registered in {comp.name}")
    elif op is O.CONSTANT:
        if not shape.is_array:
            raise _fail(inst, "constants must have an array shape")
        if inst.literal_text is None and inst._literal is None:
            raise _fail(inst, "constant has no value")
        if inst.literal_text != "{...}" and (lit := inst.literal) is not None \
                and tuple(lit.shape) != shape.dims:
            raise _fail(inst, f"literal of shape {list(lit.shape)} for {shape.to_text()}")
    elif op is O.IOTA:
        if not shape.is_array or shape.rank == 0 or inst.iota_dimension is None \
                or not 0 <= inst.iota_dimension < shape.rank:
            raise _fail(inst, f"iota_dimension {inst.iota_dimension} does not fit {shape.to_text()}")
    elif op in (O.REPLICA_ID, O.PARTITION_ID):
        _expect_shape(inst, Shape.array(PrimitiveType.U32, ()))


def _verify_broadcast(inst: HloInstruction) -> None:
    src, out = inst.operands[0].shape, inst.shape
    dims = inst.dimensions or ()
    if len(dims) != src.rank:
        raise _fail(inst, f"{len(dims)} dimensions for an operand of rank {src.rank}")
    if out.element_type != src.element_type:
        raise _fail(inst, "broadcast changes the element type")
    if len(set(dims)) != len(dims):
        raise _fail(inst, f"dimensions {list(dims)} repeat")
    for i, d in enumerate(dims):
        if not 0 <= d < out.rank or out.dims[d] != src.dims[i]:
            raise _fail(inst, f"operand dimension {i} (size {src.dims[i]}) does not match "
                        f"result dimension {d} of {out.to_text()}")


def _verify_concatenate(inst: HloInstruction) -> None:
    dims = inst.dimensions or ()
    if len(dims) != 1:
        raise _fail(inst, "concatenate needs exactly one dimension")
    d = dims[0]
    first = inst.operands[0].shape
    if not 0 <= d < first.rank:
        raise _fail(inst, f"dimension {d} is out of range for {first.to_text()}")
    total = 0
    for o in inst.operands:
        s = o.shape
        if s.element_type != first.element_type or s.rank != first.rank or any(
                a != b for i, (a, b) in enumerate(zip(s.dims, first.dims)) if i != d):
            raise _fail(inst, f"operand {o.name} ({s.to_text()}) does not fit {first.to_text()}")
        total += s.dims[d]
    out = list(first.dims)
    out[d] = total
    _expect_shape(inst, Shape.array(first.element_type, out))


def _verify_reduce(inst: HloInstruction) -> None:
    ops = inst.operands
    if len(ops) % 2 or not ops:
        raise _fail(inst, "reduce takes N inputs and N init values")
    n = len(ops) // 2
    inputs, inits = ops[:n], ops[n:]
    first = inputs[0].shape
    dims = inst.dimensions or ()
    if len(set(dims)) != len(dims) or any(not 0 <= d < first.rank for d in dims):
        raise _fail(inst, f"dimensions {list(dims)} do not fit rank {first.rank}")
    for i, init in zip(inputs, inits):
        if i.shape.dims != first.dims:
            raise _fail(inst, f"inputs {inputs[0].name} and {i.name} differ in dimensions")
        if init.shape.rank != 0 or init.shape.element_type != i.shape.element_type:
            raise _fail(inst, f"init {init.name} ({init.shape.to_text()}) must be a scalar of "
                        f"{i.name}'s type")
    keep = [s for k, s in enumerate(first.dims) if k not in dims]
    outs = [Shape.array(i.shape.element_type, keep) for i in inputs]
    _expect_shape(inst, outs[0] if n == 1 else Shape.tuple(outs))
    _verify_reducer(inst, n, [i.shape.element_type for i in inputs])


def _verify_gather_scatter(inst: HloInstruction, module: HloModule) -> None:
    _verify_collective_mode(inst)
    src, out = inst.operands[0].shape, inst.shape
    dims = inst.dimensions or ()
    if len(dims) != 1 or not 0 <= dims[0] < src.rank:
        raise _fail(inst, f"dimensions {list(dims)} must name one dimension of {src.to_text()}")
    d = dims[0]
    if out.element_type != src.element_type or out.rank != src.rank or any(
            a != b for i, (a, b) in enumerate(zip(out.dims, src.dims)) if i != d):
        raise _fail(inst, f"shape {out.to_text()} does not fit operand {src.to_text()}")
    size = _group_size(inst, module)
    if inst.opcode is O.ALL_GATHER:
        if out.dims[d] != src.dims[d] * size:
            raise _fail(inst, f"gathering dimension {d} over {size} participants gives "
                        f"{src.dims[d] * size}, not {out.dims[d]}")
    else:
        _verify_reducer(inst, 1, [src.element_type])
        if src.dims[d] != out.dims[d] * size:
            raise _fail(inst, f"scattering dimension {d} of size {src.dims[d]} over {size} "
                        f"participants gives {src.dims[d] // max(size, 1)}, not {out.dims[d]}")
