"""The KLR interpreter's semantics of NcMatMul, Transpose and DmaTranspose, written apart
from the BIR simulator (klr/ast_tensor_engine.py states them; NKI pages cited there).

NcMatMul: the float32 values of the inputs are multiplied and summed in float32 one
contraction row (partition) after another, in partition order; `accumulate` adds the
result to dst's float32 value (so a K > 128 loop accumulates in float32, as PSUM does).
The simulator uses numpy's float32 matmul, whose summation order is its own: the ISA fixes
the accumulation precision, not the order, so the two agree exactly on exactly
representable sums and to float32 rounding otherwise. is_transpose takes, for each column
j of moving, the row k holding its single 1, and copies stationary[k, :] unconverted.
Transpose: dst = src as [P, F] transposed. DmaTranspose: src's 4-d access permuted.
IndirectDmaCopy: a loop over the partitions, each moving one row access.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from tilecc.errors import InterpError
from tilecc.klr import ast as k

if TYPE_CHECKING:
    from tilecc.klr.interp_state import State


def run_matmul(s: State, op: k.NcMatMul) -> None:
    stationary, moving = s.read(op.stationary), s.read(op.moving)
    rows = stationary.shape[0] * (2 if op.perf_mode == k.MatmulPerfMode.DoubleRow else 1)
    st = stationary.reshape(rows, -1)
    mv = moving.reshape(rows, -1)
    for name, flag, values in (("stationary", op.is_stationary_one_zero, st),
                               ("moving", op.is_moving_zero, mv)):
        if flag and not np.isin(values.astype(np.float64), (0.0, 1.0)).all():
            raise InterpError(f"the {name} zeros-and-ones hint is set but {name} holds other "
                              f"values")
    if op.is_transpose:
        s.write(op.dst, _transposed(st, mv))
        return
    a, b = st.astype(np.float32), mv.astype(np.float32)
    product = np.zeros((a.shape[1], b.shape[1]), np.float32)
    with np.errstate(all="ignore"):   # inf / NaN products are the machine's semantics
        for row in range(a.shape[0]):   # one contraction row (partition) at a time, float32
            product += np.multiply.outer(a[row], b[row])
    if op.accumulate:
        product = np.add(s.read(op.dst).astype(np.float32).reshape(product.shape), product,
                         dtype=np.float32)
    s.write(op.dst, product)


def _transposed(st: np.ndarray, mv: np.ndarray) -> np.ndarray:
    ones = mv.astype(np.float64)
    columns, picked = np.nonzero(ones.T == 1.0)
    if (np.count_nonzero(ones) != len(columns) or
            not np.array_equal(columns, np.arange(mv.shape[1]))):
        raise InterpError("is_transpose needs a moving matrix of zeros and ones with exactly "
                          "one 1 per column")
    return st[picked, :].T


def run_transpose(s: State, op: k.Transpose) -> None:
    src = s.read(op.src)
    s.write(op.dst, src.reshape(src.shape[0], -1).T)


def run_dma_transpose(s: State, op: k.DmaTranspose) -> None:
    src = s.read(op.src)
    if src.ndim != 4:
        raise InterpError(f"dma transpose source is {src.ndim}-d; its accesses are 4-d")
    s.write(op.dst, src.transpose(k.TRANSPOSE_PERMUTATION[op.axes]))


def run_indirect_dma_copy(s: State, op: k.IndirectDmaCopy) -> None:
    """One partition at a time: the HBM access moved to row index[p] (by its partition
    offset) is read into / written from partition p of the on-chip side."""
    index = s.read(op.index).reshape(-1)
    chip = k.to_pattern(op.src if op.scatter else op.dst)
    hbm = k.to_pattern(op.dst if op.scatter else op.src)
    rows = hbm.tensor.shape.par_dim
    for p, row in enumerate(int(i) for i in index):
        if not 0 <= row < rows:
            if op.oob_mode == k.DmaBounds.skip:
                continue
            raise InterpError(f"index {row} of partition {p} is outside the {rows} rows of "
                              f"{hbm.tensor.name!r}")
        moved = k.AccessPattern(hbm.tensor, 1, hbm.pattern, row, hbm.free_offset)
        lane = k.AccessPattern(chip.tensor, 1, chip.pattern, chip.par_offset + p, chip.free_offset)
        if op.scatter and op.accumulate:
            s.write(moved, np.add(s.read(moved).astype(np.float32), s.read(lane).astype(np.float32),
                                  dtype=np.float32))
        elif op.scatter:
            s.write(moved, s.read(lane))
        else:
            s.write(lane, s.read(moved))


def run_tensor_copy_dynamic(s: State, op: k.TensorCopyDynamic) -> None:
    shift = int(s.read(op.offset).reshape(-1)[0]) * op.stride
    side = k.to_pattern(op.src if op.dynamic_src else op.dst)
    row = side.tensor.shape.free_elements
    if not 0 <= side.free_offset + shift < max(row, 1):
        raise InterpError(f"the dynamic offset {shift} moves the access of {side.tensor.name!r} "
                          f"out of its partitions' rows")
    moved = k.AccessPattern(side.tensor, side.par_num, side.pattern, side.par_offset,
                            side.free_offset + shift)
    if op.dynamic_src:
        s.write(op.dst, s.read(moved))
    else:
        s.write(moved, s.read(op.src))


TENSOR_ENGINE_RUNNERS: dict[type, Callable[[State, Any], None]] = {
    k.NcMatMul: run_matmul, k.Transpose: run_transpose, k.DmaTranspose: run_dma_transpose,
    k.IndirectDmaCopy: run_indirect_dma_copy, k.TensorCopyDynamic: run_tensor_copy_dynamic,
}
