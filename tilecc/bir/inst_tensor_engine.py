"""BIR instructions of the Tensor Engine and of transposing copies.

Names follow neuronx-cc's public instruction names where there is one (MatMult, the
Tensor Engine's multiply, as the profiler shows it), else NKI's (Transpose, DmaTranspose).
Operand order and meaning (semantics: klr/ast_tensor_engine.py, cited NKI pages):
- MatMult (engine PE): ins [stationary, moving], outs [dst]; stationary [K, M] and moving
  [K, N] in SB with K <= 128 partitions, M <= 128, N <= 512 (double_row: free dims
  [2, M] / [2, N]); dst [M, N] in PSUM, float32 (bfloat16 allowed), written inside one
  2 KiB PSUM bank. accumulate adds the product to dst, else dst is overwritten;
  is_transpose moves stationary's elements bit for bit through a 0/1 moving matrix (dst
  then has stationary's dtype); stationary_onezero / moving_onezero are the zeros-and-ones
  hints; tile_row / tile_col / tile_rows / tile_cols the systolic-array tile (0, 0, 128,
  128 = the whole array).
- Transpose (engine DVE): ins [src], outs [dst]: dst[f, p] = src[p, f] with src's free
  pairs flattened; at most 32 partitions and 32 elements per partition on each side.
- IndirectDMACopy (engine DMA): ins [src, index], outs [dst]; index a [P, 1] int32 / uint32
  SB tile. Gather (scatter False): src an HBM AP of one row (partition pair [row, 1]),
  dst on chip; partition p of dst gets src moved to row index[p]. Scatter: the same with
  src on chip and dst the HBM row AP; accumulate (scatter only): the rows get += src.
  oob_skip: out-of-range rows are skipped, else an error.
- TensorCopyDynamic (a compute engine): ins [src, offset], outs [dst]; offset a one-element
  int32 / uint32 SB tile; the dynamic side's (src if dynamic_src, else dst) flat offset is
  moved by value(offset) * stride elements when the instruction runs.
- DmaTranspose (engine DMA): ins [src], outs [dst]; both 4-d (partition pair + 3 free
  pairs); `permutation` lists (destination axis, source axis) pairs, one per axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tilecc.bir.inst import Inst

PSUM_BANK_BYTES = 2048   # PSUM: 8 banks of 2 KiB per partition (NKI arch guide)


@dataclass(slots=True)
class InstMatMult(Inst):
    OPCODE: ClassVar[int] = 210
    accumulate: bool = False
    is_transpose: bool = False
    double_row: bool = False
    stationary_onezero: bool = False
    moving_onezero: bool = False
    tile_row: int = 0
    tile_col: int = 0
    tile_rows: int = 128
    tile_cols: int = 128


@dataclass(slots=True)
class InstTranspose(Inst):
    OPCODE: ClassVar[int] = 211


@dataclass(slots=True)
class InstDmaTranspose(Inst):
    OPCODE: ClassVar[int] = 212
    permutation: tuple[tuple[int, int], ...] = ()


@dataclass(slots=True)
class InstIndirectDMACopy(Inst):
    OPCODE: ClassVar[int] = 213
    scatter: bool = False
    oob_skip: bool = False
    accumulate: bool = False


@dataclass(slots=True)
class InstTensorCopyDynamic(Inst):
    OPCODE: ClassVar[int] = 214
    stride: int = 0
    dynamic_src: bool = True


TENSOR_ENGINE_INSTS: tuple[type[Inst], ...] = (InstMatMult, InstTranspose, InstDmaTranspose,
                                               InstIndirectDMACopy, InstTensorCopyDynamic)
