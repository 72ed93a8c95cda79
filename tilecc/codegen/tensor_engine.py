"""Codegen leaves of the Tensor Engine family: KLR NcMatMul / Transpose / DmaTranspose -> BIR
MatMult / Transpose / DmaTranspose (operand order: bir/inst_tensor_engine.py).

Contract: each leaf takes the running KlirToBirCodegen and the operator, binds the operands
with its `tensor_ref` (partition pair first) and emits one instruction named `<Op>-<id>`.
NcMatMul: ins [stationary, moving], outs [dst], engine PE; tile_position / tile_size become
tile_row / tile_col / tile_rows / tile_cols (both empty: the whole 128 x 128 array; one
set without the other is a CodegenError, as NKI requires both); perf_mode DoubleRow ->
double_row (DoubleRowSwInterleave has no BIR form here: CodegenError). Transpose: engine
DVE (the only engine KLR's Transpose has besides the PE path, which NKI lowers to a
matmul). DmaTranspose: the permutation of its TransposeOps (klr/ast_tensor_engine.py);
oob_mode must be error (no index is dynamic here). IndirectDmaCopy: ins [src, index],
outs [dst], oob_mode skip -> oob_skip. TensorCopyDynamic: ins [src, offset], outs [dst].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from tilecc.bir.enums import EngineType
from tilecc.bir.inst_tensor_engine import (InstDmaTranspose, InstIndirectDMACopy, InstMatMult,
                                           InstTensorCopyDynamic, InstTranspose)
from tilecc.codegen import enum_maps as m
from tilecc.errors import CodegenError
from tilecc.klr import ast as k

if TYPE_CHECKING:
    from tilecc.codegen.klr_to_bir import KlirToBirCodegen


def codegen_matmul(cg: KlirToBirCodegen, op: k.NcMatMul) -> None:
    if bool(op.tile_position) != bool(op.tile_size):
        raise CodegenError("tile_position and tile_size must both be set or both be empty")
    if op.tile_position and (len(op.tile_position) != 2 or len(op.tile_size) != 2):
        raise CodegenError(f"tile_position {list(op.tile_position)} and tile_size "
                           f"{list(op.tile_size)} must be (row, column) pairs")
    if op.perf_mode == k.MatmulPerfMode.DoubleRowSwInterleave:
        raise CodegenError("perf_mode DoubleRowSwInterleave has no BIR lowering")
    row, col = op.tile_position or (0, 0)
    rows, cols = op.tile_size or (128, 128)
    st, mv, out = cg.tensor_ref(op.stationary), cg.tensor_ref(op.moving), cg.tensor_ref(op.dst)
    cg.emit(InstMatMult(cg.name(op), EngineType.PE, [st, mv], [out],
                        accumulate=op.accumulate, is_transpose=op.is_transpose,
                        double_row=op.perf_mode == k.MatmulPerfMode.DoubleRow,
                        stationary_onezero=op.is_stationary_one_zero,
                        moving_onezero=op.is_moving_zero,
                        tile_row=row, tile_col=col, tile_rows=rows, tile_cols=cols))


def codegen_transpose(cg: KlirToBirCodegen, op: k.Transpose) -> None:
    if op.engine not in (k.Engine.dve, k.Engine.unassigned):
        raise CodegenError(f"transpose on engine {op.engine.name}: only the Vector Engine "
                           f"(dve) has a transpose instruction")
    src, out = cg.tensor_ref(op.src), cg.tensor_ref(op.dst)
    cg.emit(InstTranspose(cg.name(op), EngineType.DVE, [src], [out]))


def codegen_dma_transpose(cg: KlirToBirCodegen, op: k.DmaTranspose) -> None:
    if op.oob_mode != k.DmaBounds.error:
        raise CodegenError("dma_transpose oob_mode skip needs an indirect source")
    src, out = cg.tensor_ref(op.src), cg.tensor_ref(op.dst)
    perm = k.TRANSPOSE_PERMUTATION[op.axes]
    cg.emit(InstDmaTranspose(cg.name(op), EngineType.DMA, [src], [out],
                             permutation=tuple(enumerate(perm))))


def codegen_indirect_dma_copy(cg: KlirToBirCodegen, op: k.IndirectDmaCopy) -> None:
    if op.accumulate and not op.scatter:
        raise CodegenError("an accumulating indirect copy must be a scatter")
    src, index, out = cg.tensor_ref(op.src), cg.tensor_ref(op.index), cg.tensor_ref(op.dst)
    cg.emit(InstIndirectDMACopy(cg.name(op), EngineType.DMA, [src, index], [out],
                                scatter=op.scatter, oob_skip=op.oob_mode == k.DmaBounds.skip,
                                accumulate=op.accumulate))


def codegen_tensor_copy_dynamic(cg: KlirToBirCodegen, op: k.TensorCopyDynamic) -> None:
    src, offset, out = cg.tensor_ref(op.src), cg.tensor_ref(op.offset), cg.tensor_ref(op.dst)
    cg.emit(InstTensorCopyDynamic(cg.name(op), m.codegen_engine(op.engine), [src, offset], [out],
                                  stride=op.stride, dynamic_src=op.dynamic_src))


TENSOR_ENGINE_LEAVES: dict[type, Callable[[KlirToBirCodegen, Any], None]] = {
    k.NcMatMul: codegen_matmul, k.Transpose: codegen_transpose,
    k.DmaTranspose: codegen_dma_transpose, k.IndirectDmaCopy: codegen_indirect_dma_copy,
    k.TensorCopyDynamic: codegen_tensor_copy_dynamic,
}
