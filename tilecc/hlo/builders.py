"""Instruction builders with XLA's hlo_creation_utils semantics.

Contract (xla/service/hlo_creation_utils, HloInstruction::CreateAllGather):
- every builder infers the result shape (except where XLA takes it: make_reshape's target
  and create_all_gather's shape), checks its operands, and ADDS the new instruction to the
  operand's computation under a fresh module-unique name derived from the opcode
  (`reshape`, `reshape.1`, ... as XLA's NameUniquer hands them out); it returns that
  instruction;
- `metadata` (the verbatim `{...}` text) is attached when given, as XLA's builders do with
  their OpMetadata argument;
- a precondition violation raises VerifyError naming the builder and the operand.
make_reshape always adds a new reshape, even when the shape is unchanged (MakeReshapeHlo).

Passes create most of their instructions here, so the builders are the fast path too:
inferred array shapes come from a cache (`array_shape`; shapes are immutable), the checks
are tuple comparisons, and the instruction is constructed and linked directly.
"""

from __future__ import annotations

from collections.abc import Sequence

from tilecc.errors import VerifyError
from tilecc.hlo.ir import HloComputation, HloInstruction
from tilecc.hlo.opcodes import ELEMENTWISE_BINARY, TYPE_PRESERVING_BINARY, HloOpcode
from tilecc.hlo.replica_groups import ReplicaGroups, participants_per_group
from tilecc.hlo.types import Shape, array_shape, primitive_type_name

_RESHAPE, _BROADCAST, _SLICE = HloOpcode.RESHAPE, HloOpcode.BROADCAST, HloOpcode.SLICE


def _computation_of(builder: str, operand: HloInstruction) -> HloComputation:
    comp = operand.parent
    if comp is None:
        raise VerifyError(f"{builder}: operand {operand.name} is not in a computation")
    return comp


def _same_computation(builder: str, a: HloInstruction, b: HloInstruction) -> HloComputation:
    comp = _computation_of(builder, a)
    if b.parent is not comp:
        raise VerifyError(f"{builder}: operands {a.name} and {b.name} are in "
                          "different computations")
    return comp


def _int_tuple(values: Sequence[int]) -> tuple[int, ...]:
    """`values` as a tuple of ints; a tuple is taken as is (the common case: passes hand
    over literal tuples), any other sequence is converted element by element."""
    return values if type(values) is tuple else tuple(map(int, values))


def _add(comp: HloComputation, inst: HloInstruction) -> HloInstruction:
    """Link `inst` (a new instruction) as a user of its distinct operands and add it."""
    ops = inst.operands
    ops[0].users.append(inst)
    if len(ops) == 2 and ops[1] is not ops[0]:
        ops[1].users.append(inst)
    return comp.add_instruction(inst)


def make_reshape(shape: Shape | Sequence[int], operand: HloInstruction,
                 metadata: str | None = None) -> HloInstruction:
    """reshape(operand) to `shape` (a Shape, or dims with the operand's element type)."""
    src = operand.shape
    if not isinstance(shape, Shape):
        shape = array_shape(src.element_type, tuple(map(int, shape)))
    if not src.is_array or not shape.is_array:
        raise VerifyError(f"make_reshape: {operand.name} and the target must be arrays")
    if shape.element_type != src.element_type:
        raise VerifyError(f"make_reshape: {shape.to_text()} changes the element type of "
                          f"{operand.name} ({src.to_text()})")
    if shape.dims != src.dims and shape.element_count() != src.element_count():
        raise VerifyError(f"make_reshape: {operand.name} has {src.element_count()} "
                          f"elements, {shape.to_text()} has {shape.element_count()}")
    comp = _computation_of("make_reshape", operand)
    inst = HloInstruction("", _RESHAPE, shape, [operand])
    inst.metadata = metadata
    return _add(comp, inst)


def make_broadcast(operand: HloInstruction, broadcast_dims: Sequence[int],
                   result_dims: Sequence[int], metadata: str | None = None) -> HloInstruction:
    """broadcast(operand), dimensions=broadcast_dims, to the operand's type with result_dims."""
    dims = _int_tuple(broadcast_dims)
    out = _int_tuple(result_dims)
    src = operand.shape
    if len(dims) != src.rank:
        raise VerifyError(f"make_broadcast: {operand.name} has rank {src.rank} but "
                          f"{len(dims)} broadcast dimensions were given")
    for i, d in enumerate(dims):
        if not 0 <= d < len(out) or out[d] != src.dims[i]:
            raise VerifyError(f"make_broadcast: operand dimension {i} (size {src.dims[i]}) "
                              f"cannot map to result dimension {d} of {list(out)}")
    comp = _computation_of("make_broadcast", operand)
    inst = HloInstruction("", _BROADCAST, array_shape(src.element_type, out), [operand])
    inst.metadata, inst.dimensions = metadata, dims
    return _add(comp, inst)


def slice_shape(operand: Shape, starts: Sequence[int], limits: Sequence[int],
                strides: Sequence[int]) -> Shape:
    """Result shape of a slice; VerifyError when the bounds do not fit the operand."""
    src = operand.dims
    if not len(starts) == len(limits) == len(strides) == len(src):
        raise VerifyError(f"slice of rank-{operand.rank} {operand.to_text()} needs "
                          f"{operand.rank} starts, limits and strides")
    dims = []
    for i, a in enumerate(starts):
        b, s = limits[i], strides[i]
        if s < 1 or not 0 <= a <= b <= src[i]:
            raise VerifyError(f"slice [{a}:{b}:{s}] does not fit dimension {i} of size "
                              f"{src[i]}")
        dims.append((b - a + s - 1) // s)
    return array_shape(operand.element_type, tuple(dims))


def make_slice(operand: HloInstruction, starts: Sequence[int], limits: Sequence[int],
               strides: Sequence[int] | None = None,
               metadata: str | None = None) -> HloInstruction:
    """slice(operand), slice={[start:limit:stride], ...}; the shape is inferred."""
    # _int_tuple inlined for the tuples passes hand over
    starts_t = starts if type(starts) is tuple else _int_tuple(starts)
    limits_t = limits if type(limits) is tuple else _int_tuple(limits)
    strides_t = (1,) * len(starts_t) if strides is None else \
        strides if type(strides) is tuple else _int_tuple(strides)
    shape = slice_shape(operand.shape, starts_t, limits_t, strides_t)
    comp = _computation_of("make_slice", operand)
    inst = HloInstruction("", _SLICE, shape, [operand])
    inst.metadata = metadata
    inst.slice_starts, inst.slice_limits, inst.slice_strides = starts_t, limits_t, strides_t
    operand.users.append(inst)
    return comp.add_instruction(inst)


def make_binary(opcode: HloOpcode, lhs: HloInstruction, rhs: HloInstruction,
                metadata: str | None = None) -> HloInstruction:
    """opcode(lhs, rhs) for a type-preserving elementwise binary opcode (add, maximum, ...)."""
    if opcode not in TYPE_PRESERVING_BINARY:
        if opcode not in ELEMENTWISE_BINARY:
            raise VerifyError(f"make_binary: {opcode.mnemonic} is not an elementwise binary "
                              "opcode")
        raise VerifyError(f"make_binary: {opcode.mnemonic} needs its own builder "
                          "(its result type differs from the operands')")
    a, b = lhs.shape, rhs.shape
    if a.dims != b.dims or a.element_type != b.element_type:
        raise VerifyError(f"make_binary: {opcode.mnemonic} operands differ: {lhs.name} is "
                          f"{a.to_text()}, {rhs.name} is {b.to_text()}")
    comp = _same_computation("make_binary", lhs, rhs)
    inst = HloInstruction("", opcode, array_shape(a.element_type, a.dims), [lhs, rhs])
    inst.metadata = metadata
    return _add(comp, inst)


def make_reduce(operand: HloInstruction, init: HloInstruction, dims: Sequence[int],
                reducer: HloComputation, metadata: str | None = None) -> HloInstruction:
    """reduce(operand, init), dimensions=dims, to_apply=reducer; result = operand dims minus
    the reduced ones, element type of init."""
    reduced = tuple(sorted(map(int, dims)))
    src = operand.shape
    if len(set(reduced)) != len(reduced) or any(not 0 <= d < src.rank for d in reduced):
        raise VerifyError(f"make_reduce: dimensions {list(dims)} do not fit rank {src.rank} "
                          f"of {operand.name}")
    if init.shape.rank != 0:
        raise VerifyError(f"make_reduce: init {init.name} must be a scalar, is "
                          f"{init.shape.to_text()}")
    if init.shape.element_type != src.element_type:
        raise VerifyError(f"make_reduce: init {init.name} is "
                          f"{primitive_type_name(init.shape.element_type)}, operand {operand.name}"
                          f" is {primitive_type_name(src.element_type)}")
    keep = tuple(d for i, d in enumerate(src.dims) if i not in reduced)
    comp = _same_computation("make_reduce", operand, init)
    inst = HloInstruction("", HloOpcode.REDUCE, array_shape(init.shape.element_type, keep),
                          [operand, init])
    inst.metadata, inst.dimensions, inst.to_apply = metadata, reduced, reducer
    return _add(comp, inst)


def create_all_gather(shape: Shape, operand: HloInstruction, all_gather_dim: int,
                      replica_groups: ReplicaGroups, constrain_layout: bool,
                      channel_id: int | None, use_global_device_ids: bool,
                      metadata: str | None = None) -> HloInstruction:
    """all-gather(operand) along `all_gather_dim` into `shape` (HloInstruction::CreateAllGather),
    added to the operand's computation. The gathered dimension must be the operand's times
    the participants per group of the collective's group mode (participants_per_group)."""
    src = operand.shape
    comp = _computation_of("create_all_gather", operand)
    if not 0 <= all_gather_dim < max(src.rank, 1) or shape.rank != src.rank:
        raise VerifyError(f"create_all_gather: dimension {all_gather_dim} does not fit "
                          f"{operand.name} ({src.to_text()}) gathered into {shape.to_text()}")
    module = comp.parent
    if module is not None:
        size = participants_per_group(replica_groups, channel_id, use_global_device_ids,
                                      module.replica_count, module.num_partitions)
        if shape.dims[all_gather_dim] != src.dims[all_gather_dim] * size:
            raise VerifyError(f"create_all_gather: gathering {src.to_text()} over groups of "
                              f"{size} gives dimension {src.dims[all_gather_dim] * size}, not "
                              f"{shape.dims[all_gather_dim]}")
    inst = HloInstruction("", HloOpcode.ALL_GATHER, shape, [operand])
    inst.metadata, inst.dimensions, inst.replica_groups = metadata, (all_gather_dim,), \
        replica_groups
    inst.constrain_layout, inst.channel_id, inst.use_global_device_ids = constrain_layout, \
        channel_id, use_global_device_ids
    return _add(comp, inst)
