"""Instruction builders with XLA's hlo_creation_utils semantics.

Contract (xla/service/hlo_creation_utils, HloInstruction::CreateAllGather):
- every builder infers the result shape (except where XLA takes it: make_reshape's target
  and create_all_gather's shape), checks its operands, and ADDS the new instruction to the
  operand's computation under a fresh module-unique name derived from the opcode
  (`reshape`, `reshape.1`, ...); it returns that instruction;
- `metadata` (the verbatim `{...}` text) is attached when given, as XLA's builders do with
  their OpMetadata argument;
- a precondition violation raises VerifyError naming the builder and the operand.
make_reshape always adds a new reshape, even when the shape is unchanged (MakeReshapeHlo).
"""

from __future__ import annotations

from collections.abc import Sequence

from tilecc.errors import VerifyError
from tilecc.hlo.ir import HloComputation, HloInstruction
from tilecc.hlo.opcodes import ELEMENTWISE_BINARY, TYPE_PRESERVING_BINARY, HloOpcode
from tilecc.hlo.replica_groups import ReplicaGroups
from tilecc.hlo.types import Shape, primitive_type_name


def _computation_of(builder: str, *operands: HloInstruction) -> HloComputation:
    comp = operands[0].parent
    if comp is None:
        raise VerifyError(f"{builder}: operand {operands[0].name} is not in a computation")
    for op in operands[1:]:
        if op.parent is not comp:
            raise VerifyError(f"{builder}: operands {operands[0].name} and {op.name} are in "
                              "different computations")
    return comp


def _add(comp: HloComputation, opcode: HloOpcode, shape: Shape,
         operands: Sequence[HloInstruction], metadata: str | None, **attrs: object) -> HloInstruction:
    inst = HloInstruction.create(opcode, shape, operands, metadata=metadata, **attrs)
    return comp.add_instruction(inst)


def make_reshape(shape: Shape | Sequence[int], operand: HloInstruction,
                 metadata: str | None = None) -> HloInstruction:
    """reshape(operand) to `shape` (a Shape, or dims with the operand's element type)."""
    if not isinstance(shape, Shape):
        shape = Shape.array(operand.shape.element_type, tuple(shape))
    if not operand.shape.is_array or not shape.is_array:
        raise VerifyError(f"make_reshape: {operand.name} and the target must be arrays")
    if shape.element_type != operand.shape.element_type:
        raise VerifyError(f"make_reshape: {shape.to_text()} changes the element type of "
                          f"{operand.name} ({operand.shape.to_text()})")
    if shape.element_count() != operand.shape.element_count():
        raise VerifyError(f"make_reshape: {operand.name} has {operand.shape.element_count()} "
                          f"elements, {shape.to_text()} has {shape.element_count()}")
    return _add(_computation_of("make_reshape", operand), HloOpcode.RESHAPE, shape, [operand],
                metadata)


def make_broadcast(operand: HloInstruction, broadcast_dims: Sequence[int],
                   result_dims: Sequence[int], metadata: str | None = None) -> HloInstruction:
    """broadcast(operand), dimensions=broadcast_dims, to the operand's type with result_dims."""
    dims = tuple(int(d) for d in broadcast_dims)
    out = tuple(int(d) for d in result_dims)
    src = operand.shape
    if len(dims) != src.rank:
        raise VerifyError(f"make_broadcast: {operand.name} has rank {src.rank} but "
                          f"{len(dims)} broadcast dimensions were given")
    for i, d in enumerate(dims):
        if not 0 <= d < len(out) or out[d] != src.dims[i]:
            raise VerifyError(f"make_broadcast: operand dimension {i} (size {src.dims[i]}) "
                              f"cannot map to result dimension {d} of {list(out)}")
    shape = Shape.array(src.element_type, out)
    return _add(_computation_of("make_broadcast", operand), HloOpcode.BROADCAST, shape,
                [operand], metadata, dimensions=dims)


def slice_shape(operand: Shape, starts: Sequence[int], limits: Sequence[int],
                strides: Sequence[int]) -> Shape:
    """Result shape of a slice; VerifyError when the bounds do not fit the operand."""
    if not len(starts) == len(limits) == len(strides) == operand.rank:
        raise VerifyError(f"slice of rank-{operand.rank} {operand.to_text()} needs "
                          f"{operand.rank} starts, limits and strides")
    dims = []
    for i, (a, b, s) in enumerate(zip(starts, limits, strides)):
        if s < 1 or not 0 <= a <= b <= operand.dims[i]:
            raise VerifyError(f"slice [{a}:{b}:{s}] does not fit dimension {i} of size "
                              f"{operand.dims[i]}")
        dims.append((b - a + s - 1) // s)
    return Shape.array(operand.element_type, dims)


def make_slice(operand: HloInstruction, starts: Sequence[int], limits: Sequence[int],
               strides: Sequence[int] | None = None,
               metadata: str | None = None) -> HloInstruction:
    """slice(operand), slice={[start:limit:stride], ...}; the shape is inferred."""
    starts_t = tuple(int(x) for x in starts)
    limits_t = tuple(int(x) for x in limits)
    strides_t = tuple(int(x) for x in strides) if strides is not None else (1,) * len(starts_t)
    shape = slice_shape(operand.shape, starts_t, limits_t, strides_t)
    return _add(_computation_of("make_slice", operand), HloOpcode.SLICE, shape, [operand],
                metadata, slice_starts=starts_t, slice_limits=limits_t, slice_strides=strides_t)


def make_binary(opcode: HloOpcode, lhs: HloInstruction, rhs: HloInstruction,
                metadata: str | None = None) -> HloInstruction:
    """opcode(lhs, rhs) for a type-preserving elementwise binary opcode (add, maximum, ...)."""
    if opcode not in ELEMENTWISE_BINARY:
        raise VerifyError(f"make_binary: {opcode.mnemonic} is not an elementwise binary opcode")
    if opcode not in TYPE_PRESERVING_BINARY:
        raise VerifyError(f"make_binary: {opcode.mnemonic} needs its own builder "
                          "(its result type differs from the operands')")
    a, b = lhs.shape, rhs.shape
    if a.dims != b.dims or a.element_type != b.element_type:
        raise VerifyError(f"make_binary: {opcode.mnemonic} operands differ: {lhs.name} is "
                          f"{a.to_text()}, {rhs.name} is {b.to_text()}")
    shape = Shape.array(a.element_type, a.dims)
    return _add(_computation_of("make_binary", lhs, rhs), opcode, shape, [lhs, rhs], metadata)


def make_reduce(operand: HloInstruction, init: HloInstruction, dims: Sequence[int],
                reducer: HloComputation, metadata: str | None = None) -> HloInstruction:
    """reduce(operand, init), dimensions=dims, to_apply=reducer; result = operand dims minus
    the reduced ones, element type of init."""
    reduced = tuple(sorted(int(d) for d in dims))
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
    keep = [d for i, d in enumerate(src.dims) if i not in reduced]
    shape = Shape.array(init.shape.element_type, keep)
    return _add(_computation_of("make_reduce", operand, init), HloOpcode.REDUCE, shape,
                [operand, init], metadata, dimensions=reduced, to_apply=reducer)


def create_all_gather(shape: Shape, operand: HloInstruction, all_gather_dim: int,
                      replica_groups: ReplicaGroups, constrain_layout: bool,
                      channel_id: int | None, use_global_device_ids: bool,
                      metadata: str | None = None) -> HloInstruction:
    """all-gather(operand) along `all_gather_dim` into `shape` (HloInstruction::CreateAllGather),
    added to the operand's computation (adding it again there is a no-op)."""
    src = operand.shape
    if not 0 <= all_gather_dim < max(src.rank, 1) or shape.rank != src.rank:
        raise VerifyError(f"create_all_gather: dimension {all_gather_dim} does not fit "
                          f"{operand.name} ({src.to_text()}) gathered into {shape.to_text()}")
    if (size := replica_groups.first_group_size()) is not None and \
            shape.dims[all_gather_dim] != src.dims[all_gather_dim] * size:
        raise VerifyError(f"create_all_gather: gathering {src.to_text()} over groups of {size} "
                          f"gives dimension {src.dims[all_gather_dim] * size}, not "
                          f"{shape.dims[all_gather_dim]}")
    return _add(_computation_of("create_all_gather", operand), HloOpcode.ALL_GATHER, shape,
                [operand], metadata, dimensions=(all_gather_dim,), replica_groups=replica_groups,
                constrain_layout=constrain_layout, channel_id=channel_id,
                use_global_device_ids=use_global_device_ids)
