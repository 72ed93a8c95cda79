"""Verifier checks of the Tensor Engine family (bir/inst_tensor_engine.py), as the NKI ISA
reference states them (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/
generated/nki.isa.nc_matmul.html, .../nki.isa.nc_transpose.html, .../nki.isa.dma_transpose.html).

Contract: each `check_*` takes the verifier's InstChecker (whose `inst` is the instruction)
and raises its `fail(...)` VerifyError. MatMult: stationary and moving in SB, dst in PSUM;
equal partition counts <= the tile's rows (128 untiled); stationary free size <= the
tile's columns (128), moving free size <= 512 (one float32 PSUM bank); dst [M, N] with M
= stationary's and N = moving's free size (double_row: free sizes [2, M] / [2, N] and fp8
inputs, no column tiling); input dtypes fp8 (e4m3 / e5m2 / e4m3fn) / bf16 / fp16 / tf32 /
fp32, fp32-class inputs only together, legacy e4m3 and e4m3fn never together; dst float32
or bfloat16 (is_transpose: stationary's dtype); tile sizes 32 / 64 / 128 with positions
multiples of them inside the array; dst's bytes inside one 2 KiB PSUM bank of its location
(a location larger than a bank starts on a bank: sim/machine.py). Transpose: 32 x 32 at
most per side, elements equal, same dtype. DmaTranspose: 4-d accesses, dst the permuted src.
IndirectDMACopy: the indexed side in HBM naming one row, the other on chip, an int32 /
uint32 [P, 1] SB index, equal elements per partition. TensorCopyDynamic: a one-element
int32 / uint32 offset, as many elements written as read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from tilecc.bir import inst as b
from tilecc.bir.enums import BIR_DTYPE_SIZE, BirDtype, MemoryKind
from tilecc.bir.inst_tensor_engine import (PSUM_BANK_BYTES, InstDmaTranspose,
                                           InstIndirectDMACopy, InstMatMult, InstTensorCopyDynamic,
                                           InstTranspose)

if TYPE_CHECKING:
    from tilecc.bir.verifier import InstChecker

D = BirDtype
FP8 = frozenset({D.float8e4, D.float8e5, D.float8_e4m3, D.float8_e4m3fn})
MATMUL_INPUTS = FP8 | {D.bfloat16, D.float16, D.float32, D.float32r}
FP32_CLASS = frozenset({D.float32, D.float32r})
MATMUL_OUTPUTS = frozenset({D.float32, D.bfloat16})
TILE_SIZES = (32, 64, 128)
MAX_STATIONARY_FREE = 128
MAX_MOVING_FREE = 512


def free_elements(ap: b.AccessPattern) -> int:
    n = 1
    for _, num in ap.ap[1:]:
        n *= num
    return n


def check_matmult(c: InstChecker) -> None:
    inst = c.inst
    assert isinstance(inst, InstMatMult)
    c.count((2,), 1)
    st, mv = c.tile(inst.ins[0], "stationary"), c.tile(inst.ins[1], "moving")
    dst = inst.outs[0]
    for what, ap, kind in (("stationary", st, MemoryKind.SB), ("moving", mv, MemoryKind.SB),
                           ("dst", dst, MemoryKind.PSUM)):
        if c.locs[ap.memref].kind != kind:
            raise c.fail(f"{what} must be in {kind.name}, '{ap.memref}' is in "
                         f"{c.locs[ap.memref].kind.name}")
    _check_tiling(c, inst)
    k, k_moving = st.ap[0][1], mv.ap[0][1]
    if k != k_moving:
        raise c.fail(f"stationary and moving differ in partitions (the contraction): {k} vs "
                     f"{k_moving}")
    if k > inst.tile_rows:
        raise c.fail(f"{k} contraction partitions exceed the tile's {inst.tile_rows} rows")
    m, n = free_elements(st), free_elements(mv)
    if inst.double_row:
        if st.ap[1][1] != 2 or mv.ap[1][1] != 2:
            raise c.fail("double_row needs a first free dim of 2 on stationary and moving")
        m, n = m // 2, n // 2
    if m > min(MAX_STATIONARY_FREE, inst.tile_cols):
        raise c.fail(f"stationary free size {m} exceeds {min(MAX_STATIONARY_FREE, inst.tile_cols)}")
    if n > MAX_MOVING_FREE:
        raise c.fail(f"moving free size {n} exceeds {MAX_MOVING_FREE} (one PSUM bank of float32)")
    if dst.ap[0][1] != m or free_elements(dst) != n:
        raise c.fail(f"dst is {dst.ap[0][1]} x {free_elements(dst)}, the product is {m} x {n}")
    _check_matmul_dtypes(c, inst, st.dtype, mv.dtype, dst.dtype)
    _check_one_bank(c, dst)


def _check_tiling(c: InstChecker, inst: InstMatMult) -> None:
    for what, size, start in (("row", inst.tile_rows, inst.tile_row),
                              ("column", inst.tile_cols, inst.tile_col)):
        if size not in TILE_SIZES:
            raise c.fail(f"tile {what} size {size} is not 32, 64 or 128")
        if start % size or not 0 <= start < 128:
            raise c.fail(f"tile start {what} {start} is not a multiple of {size} inside the "
                         f"128 x 128 array")
    if inst.double_row and inst.tile_cols != 128:
        raise c.fail("double_row cannot be combined with column tiling")


def _check_matmul_dtypes(c: InstChecker, inst: InstMatMult, st: BirDtype, mv: BirDtype,
                         dst: BirDtype) -> None:
    for what, dtype in (("stationary", st), ("moving", mv)):
        if dtype not in MATMUL_INPUTS:
            raise c.fail(f"{what} dtype {dtype.name} is not fp8, bf16, fp16, tf32 or fp32")
    if (st in FP32_CLASS) != (mv in FP32_CLASS):
        raise c.fail(f"a tf32 / fp32 input needs a tf32 / fp32 partner, found {st.name} and "
                     f"{mv.name}")
    if {st, mv} >= {D.float8_e4m3fn} and ({st, mv} & {D.float8e4, D.float8_e4m3}):
        raise c.fail("legacy float8_e4m3 and float8_e4m3fn cannot meet in one matmul")
    if inst.double_row and not {st, mv} <= FP8:
        raise c.fail(f"double_row needs fp8 inputs, found {st.name} and {mv.name}")
    if inst.is_transpose:
        if dst != st:
            raise c.fail(f"a transpose keeps the dtype: dst is {dst.name}, stationary {st.name}")
    elif dst not in MATMUL_OUTPUTS:
        raise c.fail(f"dst dtype {dst.name} must be float32 or bfloat16 (PSUM accumulates in "
                     f"float32)")


def _check_one_bank(c: InstChecker, dst: b.AccessPattern) -> None:
    loc = c.locs[dst.memref]
    size = BIR_DTYPE_SIZE[dst.dtype]
    row = loc.bytes_per_partition // size
    first = dst.offset % row if row else 0
    lo = hi = first
    for step, num in dst.ap[1:]:
        span = step * (num - 1)
        lo, hi = lo + min(span, 0), hi + max(span, 0)
    if (lo * size) // PSUM_BANK_BYTES != ((hi + 1) * size - 1) // PSUM_BANK_BYTES:
        raise c.fail(f"dst bytes {lo * size}..{(hi + 1) * size - 1} of '{dst.memref}' cross a "
                     f"{PSUM_BANK_BYTES}-byte PSUM bank (an accumulation group lives in one bank)")


def check_transpose(c: InstChecker) -> None:
    c.count((1,), 1)
    src, dst = c.tile(c.inst.ins[0], "input"), c.inst.outs[0]
    for what, ap in (("input", src), ("output", dst)):
        if ap.ap[0][1] > 32 or free_elements(ap) > 32:
            raise c.fail(f"Vector Engine transpose {what} is {ap.ap[0][1]} x "
                         f"{free_elements(ap)}; at most 32 x 32")
    if src.ap[0][1] != free_elements(dst) or free_elements(src) != dst.ap[0][1]:
        raise c.fail(f"output {dst.ap[0][1]} x {free_elements(dst)} is not the transpose of "
                     f"{src.ap[0][1]} x {free_elements(src)}")
    if src.dtype != dst.dtype:
        raise c.fail(f"input {src.dtype.name} and output {dst.dtype.name} differ in dtype")


def check_dma_transpose(c: InstChecker) -> None:
    inst = c.inst
    assert isinstance(inst, InstDmaTranspose)
    c.count((1,), 1)
    src, dst = c.tile(inst.ins[0], "input"), inst.outs[0]
    if len(src.ap) != 4 or len(dst.ap) != 4:
        raise c.fail(f"DMA transpose accesses are 4-d, found {len(src.ap)}-d and {len(dst.ap)}-d")
    perm = dict(inst.permutation)
    if sorted(perm) != [0, 1, 2, 3] or sorted(perm.values()) != [0, 1, 2, 3]:
        raise c.fail(f"permutation {list(inst.permutation)} is not a permutation of 4 axes")
    want = [src.ap[perm[axis]][1] for axis in range(4)]
    if [num for _, num in dst.ap] != want:
        raise c.fail(f"output {[n for _, n in dst.ap]} is not the input permuted: {want}")
    if src.dtype != dst.dtype:
        raise c.fail(f"input {src.dtype.name} and output {dst.dtype.name} differ in dtype")
    if c.locs[dst.memref].kind != MemoryKind.SB:
        raise c.fail(f"the destination must be in SB, '{dst.memref}' is not")


def check_indirect_dma_copy(c: InstChecker) -> None:
    inst = c.inst
    assert isinstance(inst, InstIndirectDMACopy)
    c.count((2,), 1)
    src, index = c.tile(inst.ins[0], "source"), c.tile(inst.ins[1], "index")
    dst = inst.outs[0]
    hbm, chip = (dst, src) if inst.scatter else (src, dst)
    if c.locs[hbm.memref].kind != MemoryKind.HBM or c.locs[chip.memref].kind == MemoryKind.HBM:
        side = "destination" if inst.scatter else "source"
        raise c.fail(f"the indexed {side} must be in HBM and the other side on chip")
    if hbm.ap[0][1] != 1:
        raise c.fail(f"the HBM access names one row (one partition), found {hbm.ap[0][1]}")
    if c.locs[index.memref].kind != MemoryKind.SB or index.dtype not in (D.int32, D.uint32):
        raise c.fail(f"the index must be an int32 / uint32 SB tile, found {index.dtype.name} in "
                     f"{c.locs[index.memref].kind.name}")
    if index.ap[0][1] != chip.ap[0][1] or free_elements(index) != 1:
        raise c.fail(f"the index must be [{chip.ap[0][1]}, 1], found "
                     f"[{index.ap[0][1]}, {free_elements(index)}]")
    if free_elements(chip) != free_elements(hbm):
        raise c.fail(f"{free_elements(chip)} elements per partition move to / from rows of "
                     f"{free_elements(hbm)}")


def check_tensor_copy_dynamic(c: InstChecker) -> None:
    c.count((2,), 1)
    src, offset = c.tile(c.inst.ins[0], "source"), c.tile(c.inst.ins[1], "offset")
    if offset.dtype not in (D.int32, D.uint32) or offset.ap[0][1] * free_elements(offset) != 1:
        raise c.fail(f"the dynamic offset must be one int32 / uint32 element, found "
                     f"{offset.dtype.name} {[n for _, n in offset.ap]}")
    c.same_size(src, c.inst.outs[0])


TENSOR_ENGINE_CHECKS: dict[type[b.Inst], Callable[[InstChecker], None]] = {
    InstMatMult: check_matmult, InstTranspose: check_transpose,
    InstDmaTranspose: check_dma_transpose, InstIndirectDMACopy: check_indirect_dma_copy,
    InstTensorCopyDynamic: check_tensor_copy_dynamic,
}
