"""KLR operators of the Tensor Engine and of transposing data movement (KLR HEAD names).

Fields are KLR HEAD's (KLR/Core/Operators.lean: `NcMatMul`, `Transpose`, `DmaTranspose`,
the enums `MatmulPerfMode`, `TransposeOps`, `DmaBounds`) in snake_case, plus one field of
tilecc's own, `NcMatMul.accumulate`, which KLR HEAD does not have (its NKI frontend has no
`accumulate=`): a document without the key reads as False (overwrite), which is what a
KLR HEAD matmul into a fresh PSUM tile does. The classes are exported by `klr.ast`; this
module needs nothing from it at run time (annotations are strings), so `klr.ast` can
import it first.

Semantics (NKI ISA reference, https://awsdocs-neuron.readthedocs-hosted.com/en/latest/
nki/api/generated/nki.isa.nc_matmul.html, .../nki.isa.nc_transpose.html,
.../nki.isa.dma_transpose.html):
- NcMatMul: dst[M, N] = stationary[K, M].T @ moving[K, N], products and sums in float32
  (K = the partition axis, <= 128; M <= 128; N <= 512, one PSUM bank of float32), every
  free axis of an operand flattened in row-major order. accumulate: dst += the product
  (dst must hold values); otherwise dst = the product. perf_mode DoubleRow: the operands
  are [K, 2, M] / [K, 2, N] and the contraction runs over K and the 2 (fp8 inputs only).
  is_transpose: moving is a 0/1 selection matrix (one 1 per column: an identity or a
  permutation) and dst[i, j] = stationary[k, i] for the k with moving[k, j] = 1, moved
  bit for bit (NaN and inf pass through; dst keeps stationary's dtype). The hints
  is_stationary_one_zero / is_moving_zero promise an operand of zeros and ones only;
  a hint that does not hold is an error (the hardware would compute something else).
  tile_position / tile_size ((row, column) pairs, both empty or both set) select a part
  of the systolic array and do not change the values.
- Transpose (Vector Engine): dst = the 2-D transpose of src's partition axis against its
  flattened free axes, in 32 x 32 blocks: dst[f, p] = src[p, f]; both sides at most
  32 partitions x 32 elements per block row.
- IndirectDmaCopy (tilecc's operator: KLR HEAD puts a DMA's index tile in the
  vectorOffset of a `birPattern` access, which this AST has no form for): a row gather
  (scatter False: dst on chip, src in HBM) or scatter (scatter True: src on chip, dst in
  HBM) by `index`, a [P, 1] int32 / uint32 SBUF tile. The HBM side's access names one row
  (par_num 1 at partition 0) and the elements in it; partition p of the on-chip side moves
  to / from that access shifted to row index[p]. oob_mode error: an index outside the
  tensor's rows is an error; skip: that partition is not moved (dst keeps its values).
  accumulate (scatter only, NKI's dst_rmw_op=add): the row gets += the partition, in
  partition order (a row named twice gets both).
  (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/
  nki.isa.dma_copy.html, "Indirect addressing")
- TensorCopyDynamic (tilecc's operator for nisa.tensor_copy_dynamic_src / _dst, which KLR
  HEAD writes as ncCopy with a scalarOffset access): dst = src on a compute engine, the
  dynamic side (src when dynamic_src, else dst) moved by value(offset) * stride elements
  within each partition, where `offset` is a one-element int32 / uint32 SBUF tile read when
  the instruction runs; the moved access must stay inside the tensor's partition rows.
  (.../nki.isa.tensor_copy_dynamic_src.html)
- DmaTranspose: both accesses are 4-d (partition / first dim and three free pairs, size-1
  pairs padding a smaller tensor); dst = src with its axes permuted as
  TRANSPOSE_PERMUTATION[axes] says (NKI's 2-d [1, 0], 3-d [2, 1, 0] and 4-d [3, 1, 2, 0]
  are WZXY, XYZW on [a, b, c, 1] and XZYW); dst has src's dtype.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tilecc.klr.ast import Dtype, Engine, Pos, TensorRef

# KLR `List Nat`, named so that the JSON readers can key a reader on it
NatList = tuple[int, ...]


class MatmulPerfMode(IntEnum):
    None_ = 0
    DoubleRow = 1
    DoubleRowSwInterleave = 2


# KLR's constructor is `None`, a Python keyword: the JSON name of None_ is "None"
MatmulPerfMode.None_._name_ = "None"


class TransposeOps(IntEnum):
    """KLR TransposeOps: the destination axes as letters of the source's (W X Y Z = 0 1 2 3
    of a 4-d access, the last letters of a shorter one)."""
    None_ = 0
    WZXY = 1
    WXZY = 2
    WYXZ = 3
    ZWYX = 4
    ZYWX = 5
    ZYXW = 6
    YXWZ = 7
    YXZW = 8
    YWZX = 9
    XWZY = 10
    XZYW = 11
    XYZW = 12
    XYWZ = 13


TransposeOps.None_._name_ = "None"


class DmaBounds(IntEnum):
    """KLR DmaBounds without its `reg` form: what a DMA does with an out-of-bounds index."""
    skip = 0
    error = 1


# KLR's reading of each TransposeOps (KLR/Trace/ISA.lean getTransposeOps): destination
# axis i is source axis PERMUTATION[op][i] of a 4-d access (partition / first dim first)
TRANSPOSE_PERMUTATION: dict[TransposeOps, tuple[int, int, int, int]] = {
    TransposeOps.None_: (0, 1, 2, 3), TransposeOps.WZXY: (0, 1, 3, 2),
    TransposeOps.WXZY: (0, 3, 1, 2), TransposeOps.WYXZ: (0, 2, 3, 1),
    TransposeOps.ZWYX: (1, 0, 2, 3), TransposeOps.ZYWX: (1, 2, 0, 3),
    TransposeOps.ZYXW: (1, 2, 3, 0), TransposeOps.YXWZ: (2, 3, 0, 1),
    TransposeOps.YXZW: (2, 3, 1, 0), TransposeOps.YWZX: (2, 0, 1, 3),
    TransposeOps.XWZY: (3, 0, 1, 2), TransposeOps.XZYW: (3, 1, 2, 0),
    TransposeOps.XYZW: (3, 2, 1, 0), TransposeOps.XYWZ: (3, 2, 0, 1),
}


@dataclass(slots=True)
class NcMatMul:
    dst: TensorRef
    stationary: TensorRef
    moving: TensorRef
    is_stationary_one_zero: bool = False
    is_moving_zero: bool = False
    is_transpose: bool = False
    tile_position: NatList = ()
    tile_size: NatList = ()
    perf_mode: MatmulPerfMode = MatmulPerfMode.None_
    accumulate: bool = False
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class Transpose:
    dst: TensorRef
    src: TensorRef
    dtype: Dtype | None
    engine: Engine
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class DmaTranspose:
    dst: TensorRef
    src: TensorRef
    axes: TransposeOps = TransposeOps.None_
    dtype: Dtype | None = None
    dge_mode: int = 0
    oob_mode: DmaBounds = DmaBounds.error
    priority: int | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class IndirectDmaCopy:
    dst: TensorRef
    src: TensorRef
    index: TensorRef
    scatter: bool = False
    oob_mode: DmaBounds = DmaBounds.error
    accumulate: bool = False
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class TensorCopyDynamic:
    dst: TensorRef
    src: TensorRef
    offset: TensorRef
    stride: int
    dynamic_src: bool
    dtype: Dtype | None
    engine: Engine
    pos: Pos | None = field(default=None, compare=False)
