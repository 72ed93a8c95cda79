"""The KLR -> BIR enum crosswalks of spec 003 ("Enum Crosswalks"), as data.

Contract: each table is indexed by the KLR ordinal (the spec's 1-based index minus one,
"idx = klrAluOp - 1"); each `codegen_*` function range-checks its input and raises
CodegenError for a value outside the KLR enum, except codegenActivationFunc, which
defaults to ActivationFunctionType.Unknown (30) as the spec says. Tables:
- codegenAluOp: the byte-exact 29-entry table dword_1DE9760 (every KLR AluOp is legal;
  BIR elemwise_mul, abs_max, abs_min, mod_int have no KLR source).
- codegenEngine: unassigned -> Unassigned, then table dword_1DE9740 (idx = klrEngine - 2).
- codegenAccumCmd (DESIGN.md): Idle, Zero, Accumulate -> AddAccumulate, ZeroAccumulate,
  LoadAccumulate -> LoadAccumulate. Mapping LoadAccumulate through is this project's
  design decision; the public notes spec 003 is drawn from say the real compiler rejects
  LoadAccumulate here instead.
- codegenActivationFunc: the 25-entry table dword_1DE9840.
- codegenTensorSubDim: X..XYZW -> AxisListType 0..3; nothing maps above 3 (no C / XYZWC).
- setTensorScalarReverseOps: none / first / second / both -> (reverse0, reverse1).
- Activate2's op0 / op1 / reduce_op are ALU ops (DESIGN.md) and go through codegenAluOp;
  its function goes through codegenActivationFunc.
- Dtype by name; Memory: sbuf -> SB, psum -> PSUM, the HBMs -> HBM, reg rejected.
"""

from __future__ import annotations

from tilecc.bir.enums import (ActivationFunctionType, AluOpType, AxisListType, BirDtype,
                              EngineAccumulationType, EngineType, MemoryKind)
from tilecc.errors import CodegenError
from tilecc.klr import ast as k

CODEGEN_ALU_OP: tuple[int, ...] = (
    29, 4, 2, 3, 24, 10, 1, 11, 12, 0, 7, 18, 21, 20, 23, 22, 13, 14, 16, 17, 15, 8, 9, 27, 6,
    19, 26, 28, 5)
# act, dma, dve, pe, pool, sp (KLR Engine 2..7); unassigned (1) is handled before the table
CODEGEN_ENGINE: tuple[int, ...] = (2, 4, 5, 3, 1, 6)
CODEGEN_ACCUM_CMD: tuple[EngineAccumulationType, ...] = (
    EngineAccumulationType.Idle, EngineAccumulationType.Zero,
    EngineAccumulationType.AddAccumulate, EngineAccumulationType.ZeroAccumulate,
    EngineAccumulationType.LoadAccumulate)
CODEGEN_ACTIVATION_FUNC: tuple[int, ...] = (
    24, 14, 23, 12, 22, 7, 16, 18, 21, 11, 17, 25, 2, 10, 5, 15, 27, 28, 13, 8, 9, 1, 6, 19, 20)
CODEGEN_TENSOR_SUB_DIM: tuple[AxisListType, ...] = (
    AxisListType.X, AxisListType.XY, AxisListType.XYZ, AxisListType.XYZW)
REVERSE_OPS: dict[k.TensorScalarReverseOps, tuple[bool, bool]] = {
    k.TensorScalarReverseOps.none: (False, False),
    k.TensorScalarReverseOps.first: (True, False),
    k.TensorScalarReverseOps.second: (False, True),
    k.TensorScalarReverseOps.both: (True, True),
}
_REVERSE = tuple(REVERSE_OPS[r] for r in k.TensorScalarReverseOps)
MEMORY_KIND: dict[k.Memory, MemoryKind] = {
    k.Memory.hbm: MemoryKind.HBM, k.Memory.shared_hbm: MemoryKind.HBM,
    k.Memory.private_hbm: MemoryKind.HBM, k.Memory.sbuf: MemoryKind.SB,
    k.Memory.psum: MemoryKind.PSUM}
REJECTED_MEMORIES = frozenset({k.Memory.reg})
BIR_DTYPE: dict[k.Dtype, BirDtype] = {d: BirDtype(d.value) for d in k.Dtype}


def _index(value: int, size: int, what: str) -> int:
    if isinstance(value, bool) or not 0 <= int(value) < size:
        raise CodegenError(f"{what} ordinal {value!r} is out of range (0..{size - 1})")
    return int(value)


# The tables as BIR members, indexed by KLR ordinal: a KLR enum member indexes them
# directly (every member is in range); other values take the checked path.
_ALU_OP = tuple(AluOpType(v) for v in CODEGEN_ALU_OP)
_ENGINE = (EngineType.Unassigned, *(EngineType(v) for v in CODEGEN_ENGINE))
_ACTIVATION_FUNC = tuple(ActivationFunctionType(v) for v in CODEGEN_ACTIVATION_FUNC)


def codegen_alu_op(op: int) -> AluOpType:
    if type(op) is k.AluOp:
        return _ALU_OP[op]
    return _ALU_OP[_index(op, len(CODEGEN_ALU_OP), "AluOp")]


def codegen_engine(engine: int) -> EngineType:
    if type(engine) is k.Engine:
        return _ENGINE[engine]
    return _ENGINE[_index(engine, len(CODEGEN_ENGINE) + 1, "Engine")]


def codegen_accum_cmd(cmd: int) -> EngineAccumulationType:
    if type(cmd) is k.AccumCmd:
        return CODEGEN_ACCUM_CMD[cmd]
    if isinstance(cmd, bool) or not 0 <= int(cmd) < len(CODEGEN_ACCUM_CMD):
        raise CodegenError(f"Unrecognized accumulation cmd encountered! ({cmd!r})")
    return CODEGEN_ACCUM_CMD[int(cmd)]


def codegen_activation_func(func: int) -> ActivationFunctionType:
    if type(func) is k.ActivationFunc:
        return _ACTIVATION_FUNC[func]
    if isinstance(func, bool) or not 0 <= int(func) < len(CODEGEN_ACTIVATION_FUNC):
        return ActivationFunctionType.Unknown
    return _ACTIVATION_FUNC[int(func)]


def codegen_tensor_sub_dim(dim: int) -> AxisListType:
    if type(dim) is k.TensorSubDim:
        return CODEGEN_TENSOR_SUB_DIM[dim]
    return CODEGEN_TENSOR_SUB_DIM[_index(dim, len(CODEGEN_TENSOR_SUB_DIM), "TensorSubDim")]


def set_tensor_scalar_reverse_ops(rev: k.TensorScalarReverseOps) -> tuple[bool, bool]:
    if type(rev) is k.TensorScalarReverseOps:
        return _REVERSE[rev]
    if rev not in REVERSE_OPS:
        raise CodegenError(f"TensorScalarReverseOps ordinal {rev!r} is out of range (0..3)")
    return REVERSE_OPS[rev]


def codegen_memory(memory: k.Memory) -> MemoryKind:
    kind = MEMORY_KIND.get(memory)
    if kind is None:
        raise CodegenError(f"tensors in {k.Memory(memory).name} memory cannot be lowered to BIR")
    return kind


def codegen_dtype(dtype: k.Dtype) -> BirDtype:
    return BIR_DTYPE[k.Dtype(dtype)]
