"""Simulator executors of the Vector / GpSimd-engine family (bir.inst_vector).

Contract: `EXECUTORS[cls](machine, inst)` runs one instruction through the operand helpers
of sim/operands.py (and `Machine.view` for the read-modify-write of copy_predicated), in
vectorised numpy: no Python loop over elements or partitions (max8 / find_index8 /
match_replace8 step over their 8 values, a constant). Semantics are stated in
klr.ast_vector (NKI ISA pages). Statistics and selections compute in float32 and convert
to the destination dtype; copy_predicated and nc_n_gather move elements by value in
their own dtype (no float32 round trip), as the pages say ("preserves the input data
types"). A tensor_copy_predicated destination counts as written as a whole afterwards
(the simulator's written-mask is per access, not per element of a predicate); so does
nonzero_with_count's, of which only every 16th partition is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tilecc.bir.enums import EngineAccumulationType as Acc
from tilecc.bir.inst import AccessPattern, Immediate, Inst
from tilecc.bir import inst_vector as v
from tilecc.errors import SimError
from tilecc.sim.alu import ALU_TABLE, alu_entry, to_f32
from tilecc.sim.dtypes import convert, numpy_dtype
from tilecc.sim.machine import Machine
from tilecc.sim.operands import accumulate, lanes, read, read_registers, rows_of, scalar, write

F32 = np.float32


def _group_stats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(count, mean, sum of squared deviations) of each row of x, float32; empty rows 0."""
    count = np.full(x.shape[0], x.shape[1], F32)
    if x.shape[1] == 0:
        zero = np.zeros(x.shape[0], F32)
        return count, zero, zero
    mean = np.sum(x, axis=1, dtype=F32) / count
    dev = x - mean[:, None]
    return count, np.asarray(mean, F32), np.asarray(np.sum(dev * dev, axis=1, dtype=F32))


def exec_bn_stats(m: Machine, inst: v.InstBatchNormStats) -> None:
    x = rows_of(to_f32(read(m, inst.ins[0], "bn_stats input")))
    even, odd = _group_stats(x[:, 0::2]), _group_stats(x[:, 1::2])
    write(m, inst.outs[0], np.stack(even + odd, axis=1))


def exec_bn_aggr(m: Machine, inst: v.InstBatchNormAggregate) -> None:
    s = rows_of(to_f32(read(m, inst.ins[0], "bn_aggr input")))
    groups = s.reshape(s.shape[0], -1, 3)
    count, mean, m2 = groups[..., 0], groups[..., 1], groups[..., 2]
    total = np.sum(count, axis=1, dtype=F32)
    safe = np.where(total > 0, total, F32(1.0))
    pooled = np.where(total > 0, np.sum(count * mean, axis=1, dtype=F32) / safe, F32(0.0))
    spread = np.sum(m2 + count * np.square(mean - pooled[:, None]), axis=1, dtype=F32)
    var = np.where(total > 0, spread / safe, F32(0.0))
    write(m, inst.outs[0], np.stack([pooled, var], axis=1))


def _keep(m: Machine, pred_arg: Any, reverse: bool) -> np.ndarray:
    pred = read(m, pred_arg, "predicate")
    return (pred == 0) if reverse else (pred != 0)


def _reduce_max(m: Machine, outs: list[AccessPattern], acc: Acc, out: np.ndarray) -> None:
    """Fold the row maxima of `out` into the DVE registers per `acc`; drain into outs[1]."""
    lane = lanes(m, outs[0])
    accumulate(m, m.dve_acc, lane, acc, ALU_TABLE["max"], rows_of(out))
    if len(outs) > 1:
        write(m, outs[1], read_registers(m, m.dve_acc, lane).reshape(-1, 1))


def exec_select_reduce(m: Machine, inst: v.InstSelectReduce) -> None:
    if alu_entry(inst.reduce_op).name != "max":
        raise SimError(f"select_reduce reduces with max only, found {inst.reduce_op.name}")
    on_true = read(m, inst.ins[1], "on_true")
    keep = _keep(m, inst.ins[0], inst.reverse_pred).reshape(on_true.shape)
    out = np.where(keep, to_f32(on_true), to_f32(scalar(m, inst.ins[2], on_true)))
    write(m, inst.outs[0], out)
    _reduce_max(m, inst.outs, inst.acc, out)


def exec_copy_predicated(m: Machine, inst: v.InstCopyPredicated) -> None:
    src = read(m, inst.ins[0], "copy source")
    dst = m.view(inst.outs[0], write=True)
    keep = _keep(m, inst.ins[1], inst.reverse_pred).reshape(dst.shape)
    dst[keep] = convert(src.reshape(dst.shape)[keep], dst.dtype)


def _pattern_values(parts: int, offset: int, pattern: tuple[tuple[int, int], ...],
                    multiplier: int) -> np.ndarray:
    """offset + p * multiplier + sum(x_i * step_i), as [parts, elements] int64."""
    values = np.int64(offset) + np.arange(parts, dtype=np.int64)[:, None] * multiplier
    free = np.zeros(1, np.int64)
    for step, num in pattern:
        free = (free[:, None] + np.arange(num, dtype=np.int64)[None, :] * step).reshape(-1)
    return values + free[None, :]


def exec_affine_select(m: Machine, inst: v.InstAffineSelect) -> None:
    on_true = rows_of(read(m, inst.ins[0], "on_true_tile"))
    affine = _pattern_values(on_true.shape[0], inst.offset, inst.pattern, inst.channel_multiplier)
    keep = alu_entry(inst.cmp_op).fn(affine.astype(np.float64), np.zeros(1)) != 0
    out = np.where(keep, to_f32(on_true), to_f32(scalar(m, inst.ins[1], on_true)))
    write(m, inst.outs[0], out)


def exec_range_select(m: Machine, inst: v.InstRangeSelect) -> None:
    if alu_entry(inst.reduce_op).name != "max":
        raise SimError(f"range_select reduces with max only, found {inst.reduce_op.name}")
    on_true = rows_of(read(m, inst.ins[0], "on_true_tile"))
    start, fill = (scalar(m, arg, on_true) for arg in inst.ins[3:5])
    index = to_f32(start) + np.arange(on_true.shape[1], dtype=F32)[None, :]
    bound0, bound1 = (to_f32(scalar(m, arg, on_true)) for arg in inst.ins[1:3])
    keep = ((alu_entry(inst.comp_op0).fn(index, bound0) != 0)
            & (alu_entry(inst.comp_op1).fn(index, bound1) != 0))
    out = np.where(keep, to_f32(on_true), to_f32(fill))
    write(m, inst.outs[0], out)
    _reduce_max(m, inst.outs, inst.acc, out)


def exec_max8(m: Machine, inst: v.InstMax8) -> None:
    x = rows_of(to_f32(read(m, inst.ins[0], "max8 input")))
    nan_first = np.where(np.isnan(x), F32(np.inf), x)
    order = np.argsort(-nan_first, axis=1, kind="stable")[:, :8]
    write(m, inst.outs[0], np.take_along_axis(x, order, axis=1))


def _first_match(x: np.ndarray, value: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """Per row, the first column where x == value and not taken, or -1."""
    hit = (x == value[:, None]) & ~taken
    return np.where(hit.any(axis=1), np.argmax(hit, axis=1), -1)


def _absent(index: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """-1 (absent) as the all-ones value of an unsigned index dtype."""
    if dtype.kind == "u":
        return np.where(index < 0, np.iinfo(dtype).max, index).astype(dtype)
    return index.astype(dtype)


def exec_find_index8(m: Machine, inst: v.InstFindIndex8) -> None:
    x = rows_of(to_f32(read(m, inst.ins[0], "data")))
    vals = rows_of(to_f32(read(m, inst.ins[1], "vals")))
    none = np.zeros(x.shape, bool)
    found = np.stack([_first_match(x, vals[:, j], none) for j in range(8)], axis=1)
    write(m, inst.outs[0], _absent(found, numpy_dtype(inst.outs[0].dtype)))


def exec_match_replace8(m: Machine, inst: v.InstMatchReplace8) -> None:
    src = read(m, inst.ins[0], "data")
    x = rows_of(to_f32(src))
    vals = rows_of(to_f32(read(m, inst.ins[1], "vals")))
    imm = inst.ins[2]
    if not isinstance(imm, Immediate):
        raise SimError("the replacement value must be an immediate")
    taken = np.zeros(x.shape, bool)
    found = np.full((x.shape[0], 8), -1, np.int64)
    rows = np.arange(x.shape[0])
    for j in range(7, -1, -1):  # the page: duplicates pair from the last val backwards
        col = _first_match(x, vals[:, j], taken)
        found[:, j] = col
        hit = col >= 0
        taken[rows[hit], col[hit]] = True
    write(m, inst.outs[0], np.where(taken, F32(imm.value), x).reshape(src.shape))
    if len(inst.outs) > 1:
        write(m, inst.outs[1], _absent(found, numpy_dtype(inst.outs[1].dtype)))


def exec_shuffle(m: Machine, inst: v.InstShuffle) -> None:
    src = rows_of(read(m, inst.ins[0], "shuffle source"))
    mask = np.array([a.value for a in inst.ins[1:] if isinstance(a, Immediate)], np.int64)
    dst_ap = inst.outs[0]
    dst = rows_of(m.view(dst_ap, write=True))
    count = dst.shape[0]
    part = np.arange(count)
    wanted = mask[part % 32]
    source = part - part % 32 + wanted
    move = (wanted != 255)
    if move.any() and source[move].max() >= src.shape[0]:
        raise SimError(f"shuffle reads partition {int(source[move].max())} of a "
                       f"{src.shape[0]}-partition source")
    moved = src[source[move]].copy()  # in-place shuffles read before they write
    dst[move] = convert(moved, dst.dtype)


def exec_sequence_bounds(m: Machine, inst: v.InstSequenceBounds) -> None:
    ids = rows_of(to_f32(read(m, inst.ins[0], "segment_ids")))[0]
    n = ids.shape[0]
    pos = np.arange(n)
    new_run = np.ones(n, bool)
    new_run[1:] = ids[1:] != ids[:-1]
    run_start = np.maximum.accumulate(np.where(new_run, pos, 0))
    end_run = np.ones(n, bool)
    end_run[:-1] = ids[:-1] != ids[1:]
    run_end = np.minimum.accumulate(np.where(end_run, pos + 1, n)[::-1])[::-1]
    pad = ids == 0
    start = np.where(pad, n, run_start)
    end = np.where(pad, -1, run_end)
    write(m, inst.outs[0], np.stack([start, end]).astype(F32))


def exec_n_gather(m: Machine, inst: v.InstNGather) -> None:
    data = rows_of(read(m, inst.ins[0], "data"))
    idx = rows_of(read(m, inst.ins[1], "indices")).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= data.shape[1]):
        raise SimError(f"an index of nc_n_gather is outside the {data.shape[1]} elements of a "
                       f"data partition (found {int(idx.max())})")
    write(m, inst.outs[0], np.take_along_axis(data, idx, axis=1))


def exec_local_gather(m: Machine, inst: v.InstLocalGather) -> None:
    src = rows_of(read(m, inst.ins[0], "src_buffer"))
    index = rows_of(read(m, inst.ins[1], "index")).astype(np.int64)
    parts, count = index.shape
    cores = parts // 16
    # per core: its 16 index partitions flattened partition-first, the first V kept
    flat = index.reshape(cores, 16, count).transpose(0, 2, 1).reshape(cores, 16 * count)
    valid = inst.num_valid_indices or 16 * count
    starts = np.repeat(flat[:, :valid], 16, axis=0)  # [parts, V], each core's row repeated
    offsets = (starts[:, :, None] + np.arange(inst.num_elem_per_idx)[None, None, :]).reshape(parts, -1)
    if offsets.size and offsets.max() >= src.shape[1]:
        raise SimError(f"local_gather reads element {int(offsets.max())} of a partition of "
                       f"{src.shape[1]}")
    write(m, inst.outs[0], np.take_along_axis(src, offsets, axis=1))


def exec_nonzero_with_count(m: Machine, inst: v.InstNonzeroWithCount) -> None:
    x = rows_of(read(m, inst.ins[0], "src"))[0::16]
    nonzero = x != 0
    count = nonzero.sum(axis=1)
    order = np.argsort(~nonzero, axis=1, kind="stable")  # nonzero positions first, in order
    filled = np.arange(x.shape[1])[None, :] < count[:, None]
    found = np.where(filled, order + inst.index_offset, inst.padding_val)
    dst = m.view(inst.outs[0], write=True)
    rows = np.concatenate([found, count[:, None]], axis=1).astype(np.int64)
    dst[0::16] = convert(rows.reshape(dst[0::16].shape), dst.dtype)


EXECUTORS: dict[type[Inst], Callable[[Machine, Any], None]] = {
    v.InstBatchNormStats: exec_bn_stats, v.InstBatchNormAggregate: exec_bn_aggr,
    v.InstSelectReduce: exec_select_reduce, v.InstCopyPredicated: exec_copy_predicated,
    v.InstAffineSelect: exec_affine_select, v.InstRangeSelect: exec_range_select,
    v.InstMax8: exec_max8, v.InstFindIndex8: exec_find_index8,
    v.InstMatchReplace8: exec_match_replace8, v.InstShuffle: exec_shuffle,
    v.InstSequenceBounds: exec_sequence_bounds, v.InstNGather: exec_n_gather,
    v.InstLocalGather: exec_local_gather, v.InstNonzeroWithCount: exec_nonzero_with_count,
}
