"""KLR AST enums: KLR HEAD's closed enums, with the named member sets and the dtype sizes.

Invariants:
- Enums are IntEnums whose ordinal is KLR's declared position (0-based). The codegen remap
  tables of spec 003 index them 1-based ("idx = klrAluOp - 1"): use `member + 1` there.
- `DTYPE_SIZE` has an entry for every Dtype. The sets beside an enum (`INT_DTYPES`,
  `HBM_MEMORIES`, `BITWISE_ALU_OPS`) are what gates name instead of listing members again.
Everything here is re-exported by `tilecc.klr.ast`, the place to import it from.
"""

from __future__ import annotations

from enum import IntEnum


class Dtype(IntEnum):
    bfloat16 = 0
    float8e3 = 1
    float8e4 = 2
    float8e5 = 3
    float16 = 4
    float32 = 5
    float32r = 6
    int8 = 7
    int16 = 8
    int64 = 9
    int32 = 10
    uint8 = 11
    uint16 = 12
    uint32 = 13
    uint64 = 14
    float8_e4m3 = 15
    float8_e4m3fn = 16
    float8_e5m2_x4 = 17
    float8_e4m3fn_x4 = 18
    float4_e2m1fn_x4 = 19


# bytes per element (the x4 formats pack four values into one element)
DTYPE_SIZE: dict[Dtype, int] = {
    Dtype.bfloat16: 2, Dtype.float8e3: 1, Dtype.float8e4: 1, Dtype.float8e5: 1,
    Dtype.float16: 2, Dtype.float32: 4, Dtype.float32r: 4, Dtype.int8: 1, Dtype.int16: 2,
    Dtype.int64: 8, Dtype.int32: 4, Dtype.uint8: 1, Dtype.uint16: 2, Dtype.uint32: 4,
    Dtype.uint64: 8, Dtype.float8_e4m3: 1, Dtype.float8_e4m3fn: 1, Dtype.float8_e5m2_x4: 4,
    Dtype.float8_e4m3fn_x4: 4, Dtype.float4_e2m1fn_x4: 2,
}
INT_DTYPES = frozenset({Dtype.int8, Dtype.int16, Dtype.int32, Dtype.int64,
                        Dtype.uint8, Dtype.uint16, Dtype.uint32, Dtype.uint64})


class Memory(IntEnum):
    hbm = 0
    sbuf = 1
    psum = 2
    reg = 3
    shared_hbm = 4
    private_hbm = 5


HBM_MEMORIES = frozenset({Memory.hbm, Memory.shared_hbm, Memory.private_hbm})


class Engine(IntEnum):
    unassigned = 0
    act = 1
    dma = 2
    dve = 3
    pe = 4
    pool = 5
    sp = 6


class AluOp(IntEnum):
    abs = 0
    add = 1
    arith_shift_left = 2
    arith_shift_right = 3
    average = 4
    bitwise_and = 5
    bitwise_not = 6
    bitwise_or = 7
    bitwise_xor = 8
    bypass = 9
    divide = 10
    is_equal = 11
    is_ge = 12
    is_gt = 13
    is_le = 14
    is_lt = 15
    logical_and = 16
    logical_or = 17
    logical_shift_left = 18
    logical_shift_right = 19
    logical_xor = 20
    max = 21
    min = 22
    mod = 23
    mult = 24
    not_equal = 25
    pow = 26
    rsqrt = 27
    subtract = 28


# KLR AluOp.isBitwise: these act on raw integer bits
BITWISE_ALU_OPS = frozenset({
    AluOp.arith_shift_left, AluOp.arith_shift_right, AluOp.bitwise_not, AluOp.bitwise_and,
    AluOp.bitwise_or, AluOp.bitwise_xor, AluOp.logical_shift_left, AluOp.logical_shift_right,
})


class ActivationFunc(IntEnum):
    abs = 0
    arctan = 1
    copy = 2
    erf = 3
    erf_dx = 4
    exp = 5
    gelu = 6
    gelu_apprx_tanh = 7
    gelu_dx = 8
    log = 9
    mish = 10
    reciprocal = 11
    relu = 12
    rsqrt = 13
    sigmoid = 14
    sign = 15
    silu = 16
    silu_dx = 17
    sin = 18
    softplus = 19
    sqrt = 20
    square = 21
    tanh = 22
    gelu_apprx_sigmoid = 23
    gelu_apprx_sigmoid_dx = 24


class AccumCmd(IntEnum):
    Idle = 0
    Zero = 1
    Accumulate = 2
    ZeroAccumulate = 3
    LoadAccumulate = 4


class TensorSubDim(IntEnum):
    X = 0
    XY = 1
    XYZ = 2
    XYZW = 3


class TensorScalarReverseOps(IntEnum):
    none = 0
    first = 1
    second = 2
    both = 3


class DgeComputeOp(IntEnum):
    none = 0
    add = 1
