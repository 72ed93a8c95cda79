"""BIR enums in BIR's own ordinal order (reference/klr-bir.md "BIR facts", spec 003).

Invariants: each enum is an IntEnum whose value is the BIR ordinal; BIR JSON writes the
member NAME. ActivationFunctionType has 31 members with Reciprocal = 25 and Unknown = 30
(spec 003); the other ordinals follow the published codegenActivationFunc table image
(`[24,14,23,12,22,7,16,18,21,11,17,25,2,10,5,15,27,28,13,8,9,1,6,19,20]`), which makes
every KLR function land on its namesake. MemoryKind, BirDtype and the opcodes of Memset,
DMA copy, tensor copy and Iota are not numbered by the spec: tilecc defines them here.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, TypeAlias

from tilecc.klr.ast import Dtype as KlrDtype


class AluOpType(IntEnum):
    bypass = 0
    bitwise_not = 1
    arith_shift_left = 2
    arith_shift_right = 3
    add = 4
    subtract = 5
    mult = 6
    divide = 7
    max = 8
    min = 9
    bitwise_and = 10
    bitwise_or = 11
    bitwise_xor = 12
    logical_and = 13
    logical_or = 14
    logical_xor = 15
    logical_shift_left = 16
    logical_shift_right = 17
    is_equal = 18
    not_equal = 19
    is_gt = 20
    is_ge = 21
    is_lt = 22
    is_le = 23
    average = 24
    elemwise_mul = 25
    pow = 26
    mod = 27
    rsqrt = 28
    abs = 29
    abs_max = 30
    abs_min = 31
    mod_int = 32


class ActivationFunctionType(IntEnum):
    Identity = 0
    Square = 1
    Relu = 2
    Lrelu = 3
    Prelu = 4
    Sigmoid = 5
    Tanh = 6
    Exp = 7
    Softplus = 8
    Sqrt = 9
    Rsqrt = 10
    Ln = 11
    Erf = 12
    Sin = 13
    Arctan = 14
    Sign = 15
    Gelu = 16
    Mish = 17
    Gelu_apprx_tanh = 18
    Gelu_apprx_sigmoid = 19
    Derivative_Gelu_apprx_sigmoid = 20
    Derivative_Gelu = 21
    Derivative_Erf = 22
    Copy = 23
    Abs = 24
    Reciprocal = 25
    Abs_reciprocal_sqrt = 26
    Silu = 27
    Derivative_silu = 28
    Is_finite = 29
    Unknown = 30


class EngineType(IntEnum):
    Unassigned = 0
    Pool = 1
    Activation = 2
    PE = 3
    DMA = 4
    DVE = 5
    SP = 6
    ALL = 7


class EngineAccumulationType(IntEnum):
    Idle = 0
    Zero = 1
    Accumulate = 2
    ZeroAccumulate = 3
    AddAccumulate = 4
    LoadAccumulate = 5


class AxisListType(IntEnum):
    X = 0
    XY = 1
    XYZ = 2
    XYZW = 3
    XYZWC = 4
    C = 5


# cross-lane (partition) reduce axes: birverifier checkTensorReduce's "Cross-lane-reduce"
CROSS_LANE_AXES = frozenset({AxisListType.XYZWC, AxisListType.C})


class TSCMode(IntEnum):
    Reduce = 0
    Cumulative = 1
    TensorScan = 2


class MemoryKind(IntEnum):
    HBM = 0
    SB = 1
    PSUM = 2


# BIR's element types are KLR's, member by member (same names, same numbers): derived from
# the one list in tilecc/klr/ast.py so that the two can never drift apart. BIR keeps a class
# of its own so that BIR JSON and MemoryLocation stay typed in BIR's enum space. mypy cannot
# see the members of an enum built from a computed list, so the checker is told the class
# IS KlrDtype: the members it checks (names, values, int behaviour) are exactly those.
if TYPE_CHECKING:
    BirDtype: TypeAlias = KlrDtype
else:
    BirDtype = IntEnum("BirDtype", [(d.name, d.value) for d in KlrDtype], module=__name__)


BIR_DTYPE_SIZE: dict[BirDtype, int] = {
    BirDtype.bfloat16: 2, BirDtype.float8e3: 1, BirDtype.float8e4: 1, BirDtype.float8e5: 1,
    BirDtype.float16: 2, BirDtype.float32: 4, BirDtype.float32r: 4, BirDtype.int8: 1,
    BirDtype.int16: 2, BirDtype.int64: 8, BirDtype.int32: 4, BirDtype.uint8: 1,
    BirDtype.uint16: 2, BirDtype.uint32: 4, BirDtype.uint64: 8, BirDtype.float8_e4m3: 1,
    BirDtype.float8_e4m3fn: 1, BirDtype.float8_e5m2_x4: 4, BirDtype.float8_e4m3fn_x4: 4,
    BirDtype.float4_e2m1fn_x4: 2,
}
