"""BIR instructions, memory locations and access patterns (the output of KLR -> BIR codegen).

Invariants of this level (checked by `bir.verifier.verify_program`):
- A Program names its kernel, declares every MemoryLocation once (unique names), lists its
  input and output HBM tensors by name (an IOTensor each, with dtype and shape; a name may
  be both), and holds instructions in execution order.
- A MemoryLocation is `partitions` rows of `bytes_per_partition` bytes in one memory
  (HBM, SB = SBUF, PSUM); SB / PSUM have at most 128 partitions. Its elements are of
  `dtype`; row = bytes_per_partition / dtype size elements per partition.
- An AccessPattern (a physical access) names its memref, its dtype (== the memref's), a
  flat element `offset` and `ap` pairs [step, num], the PARTITION PAIR FIRST. The
  partition pair's step is the row length (consecutive partitions); element
  (p, x1, x2, ...) is partition offset // row + p, free index
  offset % row + sum(x_i * step_i), which must lie in [0, row). The first free pair
  changes slowest. Stride-0 pairs broadcast. SB / PSUM start partitions are 0/32/64/96
  (NKI: >64 partitions start at 0, 33..64 at 0 or 64).
- An Immediate is a scalar argument: dtype float32 (value a float) or int32 (an int).
- Every instruction has `name`, `engine`, `ins` (arguments, in the positional order
  below) and `outs` (access patterns), plus its op-specific fields (reference/klr-bir.md),
  and optionally `pos`, the kernel source line it comes from. Every op-specific field has
  a default value, so a header field can be added to `Inst`.

Operand order per opcode, as spec 003's leaves bind them:
- Activation (IT4): outs [dst]. Plain: ins [src, bias, scale-tile?, accumulator?]; `scale`
  holds the float scale, or None when the scale is the tile ins[2]. Computes
  dst = func(src * scale + bias); with an accumulator AP, its [P,1] value is updated by the
  row sums of dst per `acc` (Zero: 0; ZeroAccumulate: = sum; AddAccumulate /
  Accumulate / LoadAccumulate: += sum; Idle: untouched). is_activate2: ins [src, imm0,
  imm1, relu_param, accumulator?]; val = (src op0 imm0) op1 imm1 (reverse0 / reverse1
  swap), dst = func(val); the accumulator folds dst rows with reduce_op per `acc`.
- ReadActivationAccumulator (IT5) / DveReadAccumulator (IT102): ins [dst-of-drain]: writes
  the engine's accumulator registers (one per partition) into that [P,1] AP.
- Reciprocal (IT21): ins [src], outs [dst]: dst = 1 / src.
- TensorReduce (IT27): ins [src], outs [dst]; axis X..XYZW folds the last axis+1 free
  pairs of src with op; C folds the partitions; negate multiplies the result by -1.
- TensorScalarPtr (IT29), selected by flags and outputs (`bir.tensor_scalar_variant`):
  plain: ins [src, s0, s1?], dst = (src op0 s0) op1 s1 (op1 bypass and no s1 = one stage);
  reduce (two outs [dst, red], acc ZeroAccumulate): dst = src op0 s0,
  red[P,1] = op1 folded over each dst row, negated when negate_second_output;
  is_scalar_tensor_tensor only: ins [data, s0, tensor1], dst = (data op0 s0) op1 tensor1;
  is_tensor_tensor_scan: ins [src0, init, src1], r_i = (src0_i op0 r_{i-1}) op1 src1_i with
  r_{-1} = init, per partition in access order.
  reverse0 / reverse1 swap the operands of stage 0 / 1. A scalar operand is an Immediate or a
  [P,1] AP (then is_tensor_scalar_addr in the plain form).
- TensorScalarCache (IT30): ins [src, s0, s1?], mode Cumulative: per partition
  reg = op1(op0(src_i, s0), reg), dst_i = reg; reg starts per acc (Idle / Zero /
  ZeroAccumulate: identity of op1; LoadAccumulate: s1; AddAccumulate / Accumulate: the
  value left by the previous TensorScalarCache, 0 if none). Spec 003 says "reverse0/reverse1
  select forward vs reverse scan direction"; tilecc reads them as operand swaps like every
  other tensor-scalar op (reversed: op0(s0, src_i) / op1(reg, t_i)), the scan always running
  forward in access order.
- TensorTensor (IT31): ins [a, b], outs [dst]: dst = a op b.
- Exponential (IT103): ins [max_value, reduce_init, src], outs [dst]: dst = exp(src - max);
  the DVE accumulator registers (one per partition, initially 0) get the row sums of dst
  per reduce_cmd (Idle: unchanged; Zero: 0; ZeroAccumulate: = sum; AddAccumulate /
  Accumulate: += sum; LoadAccumulate: reduce_init + sum) and are drained by the
  DveReadAccumulator that follows.
- Memset: ins [Immediate], outs [dst]. DMACopy: ins [src], outs [dst], converting dtypes
  (compute_op add: dst += src). TensorCopy: ins [src], outs [dst]. Iota: outs [dst],
  dst[p, x...] = offset + p * channel_multiplier + sum(x_i * step_i) over `pattern`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Union

from tilecc.bir.enums import (ActivationFunctionType, AluOpType, AxisListType, BirDtype,
                              EngineAccumulationType, EngineType, MemoryKind, TSCMode)


@dataclass(frozen=True, slots=True)
class MemoryLocation:
    name: str
    kind: MemoryKind
    dtype: BirDtype
    partitions: int
    bytes_per_partition: int


@dataclass(frozen=True, slots=True)
class AccessPattern:
    memref: str
    dtype: BirDtype
    offset: int
    ap: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Immediate:
    dtype: BirDtype
    value: int | float


Argument = Union[AccessPattern, Immediate]


@dataclass(frozen=True, slots=True)
class SourcePos:
    """Where an instruction comes from in the kernel source: 1-based line, 0-based column
    (KLR `Pos`; tilecc/source_pos.py prints it)."""
    file: str | None
    line: int
    column: int = 0


@dataclass(slots=True)
class Inst:
    """Common header of every instruction; OPCODE is the BIR opcode number. `pos` (keyword
    only, so subclasses' positional fields are unchanged) is the kernel line it was lowered
    from, or None; it does not take part in equality."""
    OPCODE: ClassVar[int] = -1
    name: str
    engine: EngineType
    ins: list[Argument]
    outs: list[AccessPattern]
    pos: SourcePos | None = field(default=None, kw_only=True, compare=False)


@dataclass(slots=True)
class InstActivation(Inst):
    OPCODE: ClassVar[int] = 4
    scale: float | None = 1.0
    alpha: float = 0.0
    func: ActivationFunctionType = ActivationFunctionType.Identity
    acc: EngineAccumulationType = EngineAccumulationType.Idle
    is_activate2: bool = False
    op0: AluOpType = AluOpType.bypass
    op1: AluOpType = AluOpType.bypass
    reverse0: bool = False
    reverse1: bool = False
    reduce_op: AluOpType = AluOpType.bypass


@dataclass(slots=True)
class InstReadActivationAccumulator(Inst):
    OPCODE: ClassVar[int] = 5


@dataclass(slots=True)
class InstReciprocal(Inst):
    OPCODE: ClassVar[int] = 21


@dataclass(slots=True)
class InstTensorReduce(Inst):
    OPCODE: ClassVar[int] = 27
    op: AluOpType = AluOpType.add
    axis: AxisListType = AxisListType.X
    negate: bool = False


@dataclass(slots=True)
class InstTensorScalarPtr(Inst):
    OPCODE: ClassVar[int] = 29
    op0: AluOpType = AluOpType.bypass
    reverse0: bool = False
    op1: AluOpType = AluOpType.bypass
    reverse1: bool = False
    is_tensor_scalar_addr: bool = False
    is_scalar_tensor_tensor: bool = False
    is_tensor_tensor_scan: bool = False
    acc: EngineAccumulationType = EngineAccumulationType.Idle
    negate_second_output: bool = False


@dataclass(slots=True)
class InstTensorScalarCache(Inst):
    OPCODE: ClassVar[int] = 30
    op0: AluOpType = AluOpType.bypass
    reverse0: bool = False
    op1: AluOpType = AluOpType.bypass
    reverse1: bool = False
    mode: TSCMode = TSCMode.Cumulative
    acc: EngineAccumulationType = EngineAccumulationType.Idle


@dataclass(slots=True)
class InstTensorTensor(Inst):
    OPCODE: ClassVar[int] = 31
    op: AluOpType = AluOpType.add
    acc: EngineAccumulationType = EngineAccumulationType.Idle


@dataclass(slots=True)
class InstDveReadAccumulator(Inst):
    OPCODE: ClassVar[int] = 102
    acc: EngineAccumulationType = EngineAccumulationType.Accumulate


@dataclass(slots=True)
class InstExponential(Inst):
    OPCODE: ClassVar[int] = 103
    reduce_cmd: EngineAccumulationType = EngineAccumulationType.Idle


# Opcodes below are not numbered by spec 003; tilecc numbers them after BIR's range.
@dataclass(slots=True)
class InstMemset(Inst):
    OPCODE: ClassVar[int] = 200


@dataclass(slots=True)
class InstDMACopy(Inst):
    OPCODE: ClassVar[int] = 201
    compute_op: AluOpType = AluOpType.bypass


@dataclass(slots=True)
class InstTensorCopy(Inst):
    OPCODE: ClassVar[int] = 202


@dataclass(slots=True)
class InstIota(Inst):
    OPCODE: ClassVar[int] = 203
    offset: int = 0
    pattern: tuple[tuple[int, int], ...] = ()
    channel_multiplier: int = 0


# JSON opcode name (the class name without "Inst") -> class
INST_CLASSES: dict[str, type[Inst]] = {
    cls.__name__[4:]: cls for cls in (
        InstActivation, InstReadActivationAccumulator, InstReciprocal, InstTensorReduce,
        InstTensorScalarPtr, InstTensorScalarCache, InstTensorTensor, InstDveReadAccumulator,
        InstExponential, InstMemset, InstDMACopy, InstTensorCopy, InstIota)
}
from tilecc.bir.inst_tensor_engine import TENSOR_ENGINE_INSTS  # noqa: E402 (needs Inst)
INST_CLASSES.update({cls.__name__[4:]: cls for cls in TENSOR_ENGINE_INSTS})


@dataclass(frozen=True, slots=True)
class IOTensor:
    """A kernel argument: an HBM MemoryLocation of the program, with its logical shape."""
    name: str
    dtype: BirDtype
    shape: tuple[int, ...]


@dataclass(slots=True)
class Program:
    name: str
    memory_locations: list[MemoryLocation] = field(default_factory=list)
    inputs: list[IOTensor] = field(default_factory=list)
    outputs: list[IOTensor] = field(default_factory=list)
    instructions: list[Inst] = field(default_factory=list)


# Instruction families beyond spec 003 register their classes into INST_CLASSES on import.
from tilecc.bir import inst_vector as _inst_vector  # noqa: E402,F401
from tilecc.bir import inst_random as _inst_random  # noqa: E402,F401
