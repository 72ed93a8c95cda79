"""KLR (Kernel Language Representation) AST: the operators of KLR HEAD, as Python dataclasses.

Invariants of this level (checked by `check_tensor_name` / the reader, relied on by codegen,
the BIR simulator and the reference interpreter):
- A Kernel is self-contained: `inputs` and `outputs` are HBM TensorNames (memory hbm); every
  other tensor is a tile in SBUF or PSUM. A name may be both an input and an output (an
  in/out argument). Tensor names are unique within a kernel (one TensorName per name).
- A tensor is row-major: shape (par_dim, free_dims); partition p holds the free elements in
  row-major order. Its Address gives par_size partitions x free_size BYTES per partition,
  with par_dim <= par_size <= 128 (HBM: no partition limit) and
  prod(free_dims) * dtype size <= free_size.
- Enums are IntEnums whose ordinal is KLR's declared position (0-based). The codegen remap
  tables of spec 003 index them 1-based ("idx = klrAluOp - 1"): use `member + 1` there.
- Python field names are KLR's field names in snake_case (`accumulatorCmd` ->
  `accumulator_cmd`); `klr.read` writes and reads KLR's spelling. `dtype: Dtype | None` is
  KLR's `Option Dtype`: None means "the dtype of dst".

Accesses (KLR `Access`; a TensorRef is an Access in this AST, KLR's `.abstract` form):
- a TensorName itself = `simple`: the whole tensor;
- AccessBasic(tensor, indexes): one Index per dimension (partition first); Coord(e) picks
  one element (the dimension stays, with size 1), Slice(l, u, step) as Python's l:u:step
  (on the partition dim step must be 1);
- AccessPattern(tensor, par_num, pattern, par_offset, free_offset): partitions
  par_offset .. par_offset+par_num-1 (partition step is always 1), and in each partition the
  free ELEMENT indices free_offset + sum(x_i * step_i) for x_i < num_i; the first APPair
  changes slowest. step may be 0 (broadcast) or negative. (KLR stores freeOffset in bytes;
  the reader converts.) `to_pattern(access)` turns every access into this form, and
  `access_shape(access)` gives (par_num, [num_i ...]).
Statements (KLR `Stmt.oper op name pos`): a Kernel body holds the operators themselves;
each operator's last attribute `pos: Pos | None` is its statement's source position (None =
unknown; excluded from ==, so a kernel equals itself traced from another line). A tracer
records the kernel line as `op.pos = Pos(line, column, filename=...)`; `klr.read` reads and
writes it as the statement's `pos` (None is written as line 0, column 0, as KLR's own
tracer does for generated statements).
Operands (KLR `Operand`): an Immediate (int = Int32, float = Float32, by Python type) or a
TensorRef; a tensor operand of a "scalar" slot is a [P, 1] per-partition column.

Semantics of the operators (NKI ISA; reference/klr-bir.md "NKI instruction semantics").
Arithmetic happens in float32 and the result is cast to the destination dtype; bitwise
ops act on the raw bits of integer data. `op(a, b)` of an AluOp takes the left operand
first; `bypass(a, b) = a`. "reverse" swaps the two operands of one stage.
- NcActivate / ActivationReduce: dst = f(src * scale + bias); scale a float32 immediate or
  a [P,1] tile; bias a [P,1] tile or None (= 0). If reduce_op is set (only `add` is
  supported) the row sums of dst are accumulated per partition into reduce_res [P,1]
  according to accumulator_cmd: Zero sets it to 0 (no add), Accumulate and LoadAccumulate
  add to its current value, ZeroAccumulate sets it to the row sums, Idle leaves it.
- Activate2: val = (src op0 imm0) op1 imm1 (reverse0 / reverse1 swap each stage), then
  dst = f(val) (relu_param is the slope operand of parametric functions), then if
  reduce_res is set: reduce_res[P,1] <- reduce_op over the free elements of dst, combined
  with the accumulator per reduce_cmd as for NcActivate.
- Exponential: dst = exp(src - max_value) (max_value an immediate or [P,1] tile); if
  reduce_res is set, reduce_res[P,1] gets the row sums of dst per reducecmd
  (ZeroAccumulate: 0 + sum; LoadAccumulate: reduce_init + sum; Accumulate: the previous
  Exponential's accumulator + sum; Zero: 0).
- Reciprocal: dst = 1 / src (float32).
- TensorScalar: dst = (src op0 imm0) op1 imm1; reverse first -> imm0 op0 src, second ->
  imm1 op1 tmp. imm1 / op1 absent: single stage. engine selects the executing engine.
- TensorScalarReduce: dst = src op0 operand0 (reverse0 swaps); reduce_res[P,1] = reduce_op
  folded over all free elements of dst, starting from the identity (0 add, 1 mult,
  -inf max, +inf min). reduce_cmd must be ZeroAccumulate and reduce_init None (the only
  form BIR codegen emits: spec 003 acc = ZeroAccumulate).
- TensorScalarCumulative (per partition, in access order): reg starts per reduce_cmd
  (Idle / Zero / ZeroAccumulate -> identity of op1, Accumulate -> kept from the previous
  cumulative instruction, 0 if none, LoadAccumulate -> imm1); for each element i:
  reg = op1(op0(src[i], imm0), reg); dst[i] = reg. imm1 is only read by LoadAccumulate.
- NcScalarTensorTensor: dst = (data op0 src0) op1 src1; src0 an immediate or [P,1] tile,
  src1 a tile of data's shape; reverse_operands swaps per stage as TensorScalar.
- TensorTensor: dst = src0 op src1, elementwise, equal shapes, equal input dtypes; engine
  must be assigned (the BIR verifier's checkTensorTensor rejects Unassigned).
- TensorTensorScan (per partition): r[0] = op1(op0(src0[0], imm0), src1[0]);
  r[i] = op1(op0(src0[i], r[i-1]), src1[i]); dst = r. reverse_operands swaps per stage.
- TensorReduce: reduce the last 1..4 free dims (op_dim X = innermost one, XY = two, ...)
  with op; negated multiplies the result by -1; dst holds the remaining dims (keepdims
  keeps the reduced dims as size 1; the element order is the same).
- TensorPartitionReduce: dst[0, ...] = op over the partitions of data[p, ...]; op in
  {add, average, max, bitwise_or, bitwise_and}.
- NcDmaCopy: dst = src converted to dst's dtype (HBM <-> SBUF/PSUM or SBUF <-> SBUF);
  compute_op add: dst = dst + src. NcCopy: the same on an engine (tiles only).
- MemSet: every element of dst = value (cast to dtype). Iota: dst[p, x...] =
  pattern.offset + p * channel_multiplier + sum(x_i * step_i) (cast to dst's dtype).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Union

from tilecc.errors import CodegenError
from tilecc.klr.ast_tensor_engine import (TRANSPOSE_PERMUTATION, DmaBounds, DmaTranspose,
                                          IndirectDmaCopy, MatmulPerfMode, NatList, NcMatMul,
                                          TensorCopyDynamic, Transpose, TransposeOps)


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


# ---------------------------------------------------------------- tensors and accesses

@dataclass(frozen=True, slots=True)
class Shape:
    par_dim: int
    free_dims: tuple[int, ...]

    @property
    def free_elements(self) -> int:
        n = 1
        for d in self.free_dims:
            n *= d
        return n


@dataclass(frozen=True, slots=True)
class Address:
    """A memory region: par_size partitions x free_size bytes; offsets None = unallocated."""
    name: str
    memory: Memory
    par_size: int
    free_size: int
    par_offset: int | None = None
    free_offset: int | None = None
    is_shared: bool = False


@dataclass(frozen=True, slots=True)
class TensorName:
    name: str
    dtype: Dtype
    shape: Shape
    address: Address


@dataclass(frozen=True, slots=True)
class Coord:
    e: int


@dataclass(frozen=True, slots=True)
class Slice:
    l: int  # noqa: E741 (KLR's name)
    u: int
    step: int = 1

    @property
    def size(self) -> int:
        return len(range(self.l, self.u, self.step))


Index = Union[Coord, Slice]


@dataclass(frozen=True, slots=True)
class AccessBasic:
    tensor: TensorName
    indexes: tuple[Index, ...]


@dataclass(frozen=True, slots=True)
class APPair:
    step: int
    num: int


@dataclass(frozen=True, slots=True)
class AccessPattern:
    tensor: TensorName
    par_num: int
    pattern: tuple[APPair, ...]
    par_offset: int = 0
    free_offset: int = 0


Access = Union[TensorName, AccessBasic, AccessPattern]
TensorRef = Access


@dataclass(frozen=True, slots=True)
class Immediate:
    """KLR Immediate: `int` (Int32) when value is an int, `float` (Float32) when a float."""
    value: int | float


Operand = Union[Immediate, TensorName, AccessBasic, AccessPattern]


@dataclass(frozen=True, slots=True)
class DataPattern:
    offset: int
    pattern: tuple[APPair, ...]
    channel_multiplier: int


def access_tensor(access: Access) -> TensorName:
    return access if isinstance(access, TensorName) else access.tensor


def row_strides(shape: Shape) -> list[int]:
    """Element stride of each free dim in the row-major layout of one partition."""
    strides = [1] * len(shape.free_dims)
    for i in range(len(shape.free_dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape.free_dims[i + 1]
    return strides


def to_pattern(access: Access) -> AccessPattern:
    """Every access as an AccessPattern on its tensor (see the module docstring).

    Raises CodegenError for an AccessBasic whose partition Slice has a step other than 1
    (the reader already rejects it in JSON, with the field path)."""
    if isinstance(access, AccessPattern):
        return access
    if isinstance(access, TensorName):
        strides = row_strides(access.shape)
        pairs = tuple(APPair(s, n) for s, n in zip(strides, access.shape.free_dims))
        return AccessPattern(access, access.shape.par_dim, pairs)
    tensor = access.tensor
    par, *free = access.indexes
    if isinstance(par, Slice) and par.step != 1:
        # an AccessPattern's partitions are consecutive: dropping the step would silently
        # access other partitions (1:4:2 would become 1..3)
        raise CodegenError(f"access of '{tensor.name}': partition slice {par.l}:{par.u}:"
                           f"{par.step} has step {par.step}, the partition step must be 1")
    par_start, par_num = (par.e, 1) if isinstance(par, Coord) else (par.l, par.size)
    offset = 0
    pairs_list: list[APPair] = []
    for index, stride in zip(free, row_strides(tensor.shape)):
        if isinstance(index, Coord):
            offset += index.e * stride
            pairs_list.append(APPair(stride, 1))
        else:
            offset += index.l * stride
            pairs_list.append(APPair(stride * index.step, index.size))
    return AccessPattern(tensor, par_num, tuple(pairs_list), par_start, offset)


def access_shape(access: Access) -> tuple[int, tuple[int, ...]]:
    ap = to_pattern(access)
    return ap.par_num, tuple(p.num for p in ap.pattern)


# ---------------------------------------------------------------- statements

@dataclass(frozen=True, slots=True)
class Pos:
    """KLR HEAD `Pos`: where a statement comes from in the kernel source. `line` is 1-based;
    line 0 (with column 0 and nothing else) is what writers put for "unknown", read as None."""
    line: int
    column: int = 0
    line_end: int | None = None
    column_end: int | None = None
    filename: str | None = None


# ---------------------------------------------------------------- operators (KLR order of fields)

@dataclass(slots=True)
class NcActivate:
    dst: TensorRef
    src: TensorRef
    accumulator_cmd: AccumCmd
    activation_func: ActivationFunc
    scale: Operand
    bias: TensorRef | None = None
    reduce_op: AluOp | None = None
    reduce_res: TensorRef | None = None
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class ActivationReduce(NcActivate):
    """KLR `activationReduce`: the NcActivate payload under its own constructor."""


@dataclass(slots=True)
class Activate2:
    dst: TensorRef
    src: TensorRef
    op0: AluOp
    op1: AluOp
    imm0: Operand
    imm1: Operand
    activation_func: ActivationFunc
    relu_param: Operand
    reduce_op: AluOp
    reduce_res: TensorRef | None
    reduce_cmd: AccumCmd
    reverse0: bool
    reverse1: bool
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class Exponential:
    dst: TensorRef
    src: TensorRef
    max_value: Operand
    reduce_res: TensorRef | None
    reducecmd: AccumCmd
    reduce_init: Operand
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class Reciprocal:
    dst: TensorRef
    src: TensorRef
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class TensorScalar:
    dst: TensorRef
    src: TensorRef
    imm0: Operand
    op0: AluOp
    imm1: Operand | None = None
    op1: AluOp | None = None
    reverse: TensorScalarReverseOps = TensorScalarReverseOps.none
    engine: Engine = Engine.unassigned
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class TensorScalarReduce:
    dst: TensorRef
    src: TensorRef
    operand0: Operand
    op0: AluOp
    reverse0: bool
    dtype: Dtype | None
    reduce_op: AluOp | None
    reduce_res: TensorRef
    reduce_cmd: AccumCmd = AccumCmd.ZeroAccumulate
    reduce_init: Immediate | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class TensorScalarCumulative:
    dst: TensorRef
    src: TensorRef
    op0: AluOp
    op1: AluOp
    imm0: Operand
    imm1: Operand | None
    reduce_cmd: AccumCmd
    reverse: TensorScalarReverseOps = TensorScalarReverseOps.none
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class NcScalarTensorTensor:
    dst: TensorRef
    data: TensorRef
    src0: Operand
    src1: Operand
    op0: AluOp
    op1: AluOp
    reverse_operands: TensorScalarReverseOps = TensorScalarReverseOps.none
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class TensorTensor:
    dst: TensorRef
    src0: TensorRef
    src1: TensorRef
    op: AluOp
    dtype: Dtype | None = None
    engine: Engine = Engine.unassigned
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class TensorTensorScan:
    dst: TensorRef
    src0: TensorRef
    src1: TensorRef
    op0: AluOp
    op1: AluOp
    reverse_operands: TensorScalarReverseOps
    imm0: Operand
    accumulator_cmd: AccumCmd
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class TensorReduce:
    dst: TensorRef
    src: TensorRef
    op: AluOp
    op_dim: TensorSubDim
    negated: bool = False
    dtype: Dtype | None = None
    keepdims: bool = False
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class TensorPartitionReduce:
    dst: TensorRef
    op: AluOp
    data: TensorRef
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class NcDmaCopy:
    dst: TensorRef
    src: TensorRef
    compute_op: DgeComputeOp = DgeComputeOp.none
    dge_mode: int = 0
    unique_indices: bool = False
    engine: Engine = Engine.unassigned
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class NcCopy:
    dst: TensorRef
    src: TensorRef
    dtype: Dtype | None = None
    engine: Engine = Engine.unassigned
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class MemSet:
    dst: TensorRef
    value: Immediate
    dtype: Dtype
    engine: Engine = Engine.unassigned
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class Iota:
    dst: TensorRef
    pattern: DataPattern
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


Operator = Union[NcActivate, ActivationReduce, Activate2, Exponential, Reciprocal, TensorScalar,
                 TensorScalarReduce, TensorScalarCumulative, NcScalarTensorTensor, TensorTensor,
                 TensorTensorScan, TensorReduce, TensorPartitionReduce, NcDmaCopy, NcCopy,
                 MemSet, Iota, NcMatMul, Transpose, DmaTranspose, IndirectDmaCopy,
                 TensorCopyDynamic]
# A statement is one operator (KLR `Stmt.oper`), executed in body order; the statement's
# source position is the operator's `pos` (not an operator field of KLR, and not compared).
Stmt = Operator

# KLR constructor name of each operator class (the key in KLR JSON `{"ctor": {...}}`)
OPERATOR_CTOR: dict[type, str] = {
    NcActivate: "ncActivate", ActivationReduce: "activationReduce", Activate2: "activate2",
    Exponential: "exponential", Reciprocal: "reciprocal", TensorScalar: "tensorScalar",
    TensorScalarReduce: "tensorScalarReduce", TensorScalarCumulative: "tensorScalarCumulative",
    NcScalarTensorTensor: "ncScalarTensorTensor", TensorTensor: "tensorTensor",
    TensorTensorScan: "tensorTensorScan", TensorReduce: "tensorReduce",
    TensorPartitionReduce: "tensorPartitionReduce", NcDmaCopy: "ncDmaCopy", NcCopy: "ncCopy",
    MemSet: "memSet", Iota: "iota",
    NcMatMul: "ncMatMul", Transpose: "transpose", DmaTranspose: "dmaTranspose",
    IndirectDmaCopy: "indirectDmaCopy", TensorCopyDynamic: "tensorCopyDynamic",
}
# (the Tensor Engine family's classes come from klr/ast_tensor_engine.py, exported here)


@dataclass(slots=True)
class Kernel:
    name: str
    inputs: list[TensorName]
    outputs: list[TensorName]
    body: list[Stmt] = field(default_factory=list)


def make_tensor(name: str, dtype: Dtype, shape: tuple[int, ...], memory: Memory) -> TensorName:
    """A TensorName whose address exactly fits its shape (the usual form for tiles and args)."""
    s = Shape(shape[0], tuple(shape[1:]))
    return TensorName(name, dtype, s,
                      Address(name, memory, s.par_dim, s.free_elements * DTYPE_SIZE[dtype]))


# Operator families beyond spec 003 register their classes into OPERATOR_CTOR on import.
from tilecc.klr import ast_vector as _ast_vector  # noqa: E402,F401
from tilecc.klr import ast_random as _ast_random  # noqa: E402,F401
