"""BIR instructions of the Vector / GpSimd-engine family beyond spec 003 (bir.inst's invariants).

Each class is the BIR form of one KLR operator of `klr.ast_vector` (the same name; the
semantics are stated there, from the NKI ISA reference pages). Every field has a default
(the `Inst` header may grow). Operand order:
- BatchNormStats: ins [src], outs [dst (6 per partition)].
- BatchNormAggregate: ins [src (3 per group)], outs [dst (2 per partition)].
- SelectReduce: ins [predicate, on_true, on_false (Immediate or [P,1])], outs [dst,
  reduce_res?]; `acc` drives the DVE accumulator registers with `reduce_op`.
- CopyPredicated: ins [src, predicate], outs [dst] (dst is read-modify-write).
- AffineSelect: ins [on_true, on_false Immediate], outs [dst]; the predicate value is
  offset + p * channel_multiplier + sum(x_i * step_i) over `pattern`, compared by cmp_op
  with 0.
- RangeSelect: ins [on_true, bound0, bound1, range_start Immediate, on_false Immediate],
  outs [dst, reduce_res?]; `acc`, `reduce_op`, `comp_op0`, `comp_op1`.
- Max8: ins [src], outs [dst]. FindIndex8: ins [src, vals], outs [dst].
- MatchReplace8: ins [src, vals, replace Immediate], outs [dst, dst_idx?].
- Shuffle: ins [src, 32 int32 Immediates (the mask)], outs [dst].
- SequenceBounds: ins [segment_ids], outs [dst]. NGather: ins [data, indices], outs [dst].
- LocalGather: ins [src, index], outs [dst]; num_elem_per_idx, num_valid_indices (0 = all).
- NonzeroWithCount: ins [src], outs [dst]; index_offset, padding_val.
Opcodes are tilecc's own numbers (after spec 003's and bir.inst's ranges).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tilecc.bir.enums import AluOpType, EngineAccumulationType
from tilecc.bir.inst import INST_CLASSES, Inst


@dataclass(slots=True)
class InstBatchNormStats(Inst):
    OPCODE: ClassVar[int] = 300


@dataclass(slots=True)
class InstBatchNormAggregate(Inst):
    OPCODE: ClassVar[int] = 301


@dataclass(slots=True)
class InstSelectReduce(Inst):
    OPCODE: ClassVar[int] = 302
    acc: EngineAccumulationType = EngineAccumulationType.Idle
    reduce_op: AluOpType = AluOpType.max
    reverse_pred: bool = False


@dataclass(slots=True)
class InstCopyPredicated(Inst):
    OPCODE: ClassVar[int] = 303
    reverse_pred: bool = False


@dataclass(slots=True)
class InstAffineSelect(Inst):
    OPCODE: ClassVar[int] = 304
    offset: int = 0
    pattern: tuple[tuple[int, int], ...] = ()
    channel_multiplier: int = 0
    cmp_op: AluOpType = AluOpType.is_equal


@dataclass(slots=True)
class InstRangeSelect(Inst):
    OPCODE: ClassVar[int] = 305
    acc: EngineAccumulationType = EngineAccumulationType.Idle
    reduce_op: AluOpType = AluOpType.max
    comp_op0: AluOpType = AluOpType.is_ge
    comp_op1: AluOpType = AluOpType.is_lt


@dataclass(slots=True)
class InstMax8(Inst):
    OPCODE: ClassVar[int] = 306


@dataclass(slots=True)
class InstFindIndex8(Inst):
    OPCODE: ClassVar[int] = 307


@dataclass(slots=True)
class InstMatchReplace8(Inst):
    OPCODE: ClassVar[int] = 308


@dataclass(slots=True)
class InstShuffle(Inst):
    OPCODE: ClassVar[int] = 309


@dataclass(slots=True)
class InstSequenceBounds(Inst):
    OPCODE: ClassVar[int] = 310


@dataclass(slots=True)
class InstNGather(Inst):
    OPCODE: ClassVar[int] = 311


@dataclass(slots=True)
class InstLocalGather(Inst):
    OPCODE: ClassVar[int] = 312
    num_elem_per_idx: int = 1
    num_valid_indices: int = 0  # 0: every index of the core's 16 partitions


@dataclass(slots=True)
class InstNonzeroWithCount(Inst):
    OPCODE: ClassVar[int] = 313
    index_offset: int = 0
    padding_val: int = -1


VECTOR_INSTS: tuple[type[Inst], ...] = (
    InstBatchNormStats, InstBatchNormAggregate, InstSelectReduce, InstCopyPredicated,
    InstAffineSelect, InstRangeSelect, InstMax8, InstFindIndex8, InstMatchReplace8,
    InstShuffle, InstSequenceBounds, InstNGather, InstLocalGather,
    InstNonzeroWithCount)
INST_CLASSES.update({cls.__name__[4:]: cls for cls in VECTOR_INSTS})
