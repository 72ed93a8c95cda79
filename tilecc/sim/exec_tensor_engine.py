"""Simulator executors of the Tensor Engine family (bir/inst_tensor_engine.py).

Contract (semantics: klr/ast_tensor_engine.py, from the NKI ISA reference pages cited there):
- MatMult: dst = stationary.T @ moving with every free axis flattened, products and sums in
  float32 (numpy's float32 matmul: the ISA fixes the precision, not the order of the sums),
  added to dst's current values when `accumulate` (reading dst then needs it written) and
  converted to dst's dtype. double_row folds the first free dim (2) into the contraction.
  is_transpose needs a 0/1 moving matrix with one 1 per column and moves stationary's
  elements through it unchanged (bit for bit, NaN / inf included). A zeros-and-ones hint
  that does not hold, and a dst whose placed bytes cross a PSUM bank, are SimErrors.
- Transpose: dst[f, p] = src[p, f], src's free pairs flattened.
- DmaTranspose: dst = np.transpose(src, permutation) of the 4-d accesses.
- IndirectDMACopy: one fancy-indexed read (gather) or write (scatter) of the whole HBM
  tensor's [rows, row] view at rows index[p] and the row access's columns; with oob_skip
  the out-of-range partitions are not moved (a gather then needs dst to hold values, which
  it keeps there); a repeated scatter row keeps the last partition's values, or with
  accumulate gets every partition added in partition order (float32 adds, each written
  back in the tensor's dtype, as a read-modify-write DMA per partition does).
- TensorCopyDynamic: the dynamic side's access moved by offset * stride elements (one
  view per run: the offset is data), still inside its partitions' rows.
Operands go through sim/operands.py and the machine's views only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tilecc.bir.inst import AccessPattern, Inst
from tilecc.bir.inst_tensor_engine import (PSUM_BANK_BYTES, InstDmaTranspose,
                                           InstIndirectDMACopy, InstMatMult, InstTensorCopyDynamic,
                                           InstTranspose)
from tilecc.errors import SimError, SimIndexError
from tilecc.sim.alu import to_f32
from tilecc.sim.dtypes import convert
from tilecc.sim.machine import Machine
from tilecc.sim.operands import read, write
from tilecc.sim.psum_banks import bank_of

F32 = np.dtype(np.float32)


def exec_matmult(m: Machine, inst: InstMatMult) -> None:
    stationary = read(m, inst.ins[0], "stationary")
    moving = read(m, inst.ins[1], "moving")
    dst = inst.outs[0]
    _check_one_bank(m, inst)
    rows = stationary.shape[0] * (2 if inst.double_row else 1)
    st = stationary.reshape(rows, -1)
    mv = moving.reshape(rows, -1)
    if inst.stationary_onezero:
        _check_zero_one("stationary", st)
    if inst.moving_onezero:
        _check_zero_one("moving", mv)
    if inst.is_transpose:
        write(m, dst, _select_rows(st, mv).T)
        return
    if inst.accumulate:
        current = m.view(dst, write=False)   # raises if dst holds no values
    target = m.view(dst, write=True, whole=True)   # written in place, or by `write`
    product_shape = (st.shape[1], mv.shape[1])
    in_place = target.dtype == F32 and target.shape == product_shape
    if in_place and not inst.accumulate:
        np.matmul(to_f32(st).T, to_f32(mv), out=target)
        return
    product = np.matmul(to_f32(st).T, to_f32(mv))
    if inst.accumulate:
        if in_place:
            target += product
            return
        product += to_f32(current).reshape(product.shape)
    write(m, dst, product)


def _select_rows(st: np.ndarray, mv: np.ndarray) -> np.ndarray:
    """Rows of `st` picked by the one 1 of each column of the 0/1 matrix `mv`."""
    mv32 = to_f32(mv)
    if not ((mv32 == 0) | (mv32 == 1)).all() or not (mv32.sum(axis=0) == 1).all():
        raise SimError("a transposing matmul needs a moving matrix of zeros and ones with one "
                       "1 per column (an identity or a permutation)")
    return st[np.argmax(mv32, axis=0)]


def _check_zero_one(what: str, values: np.ndarray) -> None:
    v = to_f32(values)
    if not ((v == 0) | (v == 1)).all():
        raise SimError(f"is_{what}_onezero is set but the {what} tile holds values other than "
                       f"0 and 1")


def _check_one_bank(m: Machine, inst: InstMatMult) -> None:
    dst = inst.outs[0]
    pl = m.placement(dst.memref)
    first = dst.offset % pl.row
    lo = hi = first
    for step, num in dst.ap[1:]:
        span = step * (num - 1)
        lo, hi = lo + min(span, 0), hi + max(span, 0)
    start, end = pl.base + lo * pl.itemsize, pl.base + (hi + 1) * pl.itemsize - 1
    if bank_of(start) != bank_of(end):
        raise SimError(f"the output {dst.memref!r} lies on PSUM bytes {start}..{end}, across "
                       f"the {PSUM_BANK_BYTES}-byte bank boundary at "
                       f"{bank_of(end) * PSUM_BANK_BYTES}")


def exec_transpose(m: Machine, inst: InstTranspose) -> None:
    src = read(m, inst.ins[0], "transpose input")
    write(m, inst.outs[0], src.reshape(src.shape[0], -1).T)


def exec_dma_transpose(m: Machine, inst: InstDmaTranspose) -> None:
    src = read(m, inst.ins[0], "transpose input", dma=True)
    order = [source for _, source in sorted(inst.permutation)]
    write(m, inst.outs[0], np.transpose(src, order), dma=True)


def exec_indirect_dma_copy(m: Machine, inst: InstIndirectDMACopy) -> None:
    index = read(m, inst.ins[1], "index").reshape(-1).astype(np.int64)
    chip, hbm = (inst.ins[0], inst.outs[0]) if inst.scatter else (inst.outs[0], inst.ins[0])
    if not isinstance(chip, AccessPattern) or not isinstance(hbm, AccessPattern):
        raise SimError("an indirect copy moves between access patterns")
    pl = m.placement(hbm.memref)
    rows, row = pl.loc.partitions, pl.row
    whole = m.view(AccessPattern(hbm.memref, hbm.dtype, 0, ((row, rows), (1, row))),
                   write=inst.scatter, dma=True)
    columns = np.full((1,), hbm.offset % row, np.int64)
    for step, num in hbm.ap[1:]:
        columns = (columns[:, None] + np.arange(num, dtype=np.int64) * step).reshape(-1)
    inside = (index >= 0) & (index < rows)
    if not inside.all() and not inst.oob_skip:
        bad = int(np.argmax(~inside))
        raise SimIndexError(f"index {int(index[bad])} of partition {bad} is outside the {rows} "
                            f"rows of {hbm.memref!r} (oob_mode error)",
                            int(index[bad]) * row + int(columns[0]), rows * row)
    picked = index[inside][:, None]
    if inst.scatter:
        values = read(m, chip, "scattered tile", dma=True).reshape(len(index), -1)
        if inst.accumulate:
            _scatter_add(whole, index[inside], columns, values[inside])
        else:
            whole[picked, columns[None, :]] = convert(values[inside], whole.dtype)
        return
    gathered = whole[picked, columns[None, :]]
    if inside.all():
        write(m, chip, gathered, dma=True)
        return
    kept = m.view(chip, write=False, dma=True).reshape(len(index), -1).copy()   # skipped rows
    kept[inside] = convert(gathered, kept.dtype)
    write(m, chip, kept, dma=True)


def _scatter_add(whole: np.ndarray, rows: np.ndarray, columns: np.ndarray,
                 values: np.ndarray) -> None:
    """whole[rows[p], columns] += values[p] in partition order, each add in float32 and
    written back in whole's dtype (a DMA read-modify-write per partition): the k-th
    partitions naming each row go together in round k, so no round repeats a row."""
    order = np.argsort(rows, kind="stable")
    ranked = rows[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    rank = np.empty(len(rows), np.int64)
    rank[order] = np.arange(len(rows)) - np.repeat(starts, np.diff(np.r_[starts, len(rows)]))
    for round_ in range(int(rank.max(initial=-1)) + 1):
        picked = rows[rank == round_][:, None]
        total = to_f32(whole[picked, columns[None, :]]) + to_f32(values[rank == round_])
        whole[picked, columns[None, :]] = convert(total, whole.dtype)


def exec_tensor_copy_dynamic(m: Machine, inst: InstTensorCopyDynamic) -> None:
    shift = int(read(m, inst.ins[1], "dynamic offset").reshape(-1)[0]) * inst.stride
    src, dst = inst.ins[0], inst.outs[0]
    if not isinstance(src, AccessPattern):
        raise SimError("the copy source must be an access pattern")
    moved = src if inst.dynamic_src else dst
    moved = AccessPattern(moved.memref, moved.dtype, moved.offset + shift, moved.ap)
    row = m.placement(moved.memref).row
    if (moved.offset // row) != ((moved.offset - shift) // row):
        raise SimError(f"the dynamic offset {shift} moves the access of {moved.memref!r} out of "
                       f"its partitions' rows")
    if inst.dynamic_src:
        write(m, dst, read(m, moved, "copy source"))
    else:
        write(m, moved, read(m, src, "copy source"))


TENSOR_ENGINE_EXECUTORS: dict[type[Inst], Callable[[Machine, Any], None]] = {
    InstMatMult: exec_matmult, InstTranspose: exec_transpose,
    InstDmaTranspose: exec_dma_transpose, InstIndirectDMACopy: exec_indirect_dma_copy,
    InstTensorCopyDynamic: exec_tensor_copy_dynamic,
}
