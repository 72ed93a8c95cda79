"""KLR (Kernel Language Representation) AST: the operators of KLR HEAD, as Python dataclasses.

Invariants of this level (checked by `check_tensor_name` / the reader, relied on by codegen,
the BIR simulator and the reference interpreter):
- A Kernel is self-contained: `inputs` and `outputs` are HBM TensorNames (memory hbm); every
  other tensor is a tile in SBUF or PSUM. A name may be both an input and an output (an
  in/out argument). Tensor names are unique within a kernel (one TensorName per name).
- Python field names are KLR's field names in snake_case (`accumulatorCmd` ->
  `accumulator_cmd`); `klr.read` writes and reads KLR's spelling. `dtype: Dtype | None` is
  KLR's `Option Dtype`: None means "the dtype of dst".
- The enums and their member sets are in klr/ast_enums.py; tensors, accesses and operands
  (with `to_pattern`, `make_tensor`) in klr/ast_access.py; the operator families beyond
  spec 003 in klr/ast_tensor_engine.py, ast_vector.py and ast_random.py. All of them are
  exported here: import AST names from `tilecc.klr.ast`.

Statements (KLR `Stmt.oper op name pos`): a Kernel body holds the operators themselves;
each operator's last attribute `pos: Pos | None` is its statement's source position (None =
unknown; excluded from ==, so a kernel equals itself traced from another line). A tracer
records the kernel line as `op.pos = Pos(line, column, filename=...)`; `klr.read` reads and
writes it as the statement's `pos` (None is written as line 0, column 0, as KLR's own
tracer does for generated statements).

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
from typing import Union

from tilecc.klr.ast_access import (Access, AccessBasic, AccessPattern, Address, APPair, Coord,
                                   DataPattern, Immediate, Index, Operand, Shape, Slice,
                                   TensorName, TensorRef, access_shape, access_tensor,
                                   make_tensor, row_strides, to_pattern)
from tilecc.klr.ast_enums import (BITWISE_ALU_OPS, DTYPE_SIZE, HBM_MEMORIES, INT_DTYPES,
                                  AccumCmd, ActivationFunc, AluOp, DgeComputeOp, Dtype, Engine,
                                  Memory, TensorScalarReverseOps, TensorSubDim)
from tilecc.klr.ast_tensor_engine import (TRANSPOSE_PERMUTATION, DmaBounds, DmaTranspose,
                                          IndirectDmaCopy, MatmulPerfMode, NatList, NcMatMul,
                                          TensorCopyDynamic, Transpose, TransposeOps)


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


# Operator families beyond spec 003 register their classes into OPERATOR_CTOR on import.
from tilecc.klr import ast_vector as _ast_vector  # noqa: E402,F401
from tilecc.klr import ast_random as _ast_random  # noqa: E402,F401
