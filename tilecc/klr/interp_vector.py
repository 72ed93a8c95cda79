"""Reference semantics of the Vector / GpSimd-engine operators of klr.ast_vector.

Contract: `RUNNERS[cls](state, op)` runs one operator on the interpreter's `State`
(klr/interp.py: buffers, written masks, the DVE accumulator registers). Written from the
NKI ISA pages (semantics listed in klr.ast_vector) independently of the BIR simulator's
executors (sim/exec_vector.py), in the plainest form: statistics in float64 by numpy's
mean / var and the pooled sums of (count, mean, M2) groups group by group, searches and shuffles
partition by partition as the pages' pseudo code reads. tensor_copy_predicated and
nonzero_with_count mark only the elements they write as written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tilecc.errors import InterpError
from tilecc.klr import ast as k
from tilecc.klr import ast_vector as kv
from tilecc.klr.interp_state import State, accumulate, lanes, rows
from tilecc.klr.interp_alu import np_dtype

F64 = np.float64
_COMPARE: dict[k.AluOp, Callable[[np.ndarray, Any], np.ndarray]] = {
    k.AluOp.is_equal: np.equal, k.AluOp.not_equal: np.not_equal, k.AluOp.is_lt: np.less,
    k.AluOp.is_le: np.less_equal, k.AluOp.is_gt: np.greater, k.AluOp.is_ge: np.greater_equal,
}


def _f32_rows(s: State, access: k.Access) -> np.ndarray:
    return rows(s.read(access)).astype(np.float32)


def run_bn_stats(s: State, op: kv.BatchNormStats) -> None:
    x = _f32_rows(s, op.src).astype(F64)
    out = np.zeros((x.shape[0], 6), F64)
    for slot, group in ((0, x[:, 0::2]), (3, x[:, 1::2])):
        n = group.shape[1]
        out[:, slot] = n
        if n:
            with np.errstate(all="ignore"):
                out[:, slot + 1] = group.mean(axis=1)
                out[:, slot + 2] = group.var(axis=1) * n
    s.write(op.dst, out.astype(np.float32))


def run_bn_aggr(s: State, op: kv.BatchNormAggregate) -> None:
    triples = _f32_rows(s, op.src).astype(F64)
    if triples.shape[1] % 3:
        raise InterpError(f"bn_aggr input has {triples.shape[1]} elements per partition, not a "
                          f"multiple of 3")
    count, means, m2s = triples[:, 0::3], triples[:, 1::3], triples[:, 2::3]
    with np.errstate(all="ignore"):  # inf / NaN statistics propagate as the formula says
        total = count.sum(axis=1)
        mean = np.zeros(total.shape, F64)
        spread = np.zeros(total.shape, F64)
        filled = total > 0
        for g in range(count.shape[1]):  # one group at a time: sum(c m) / sum(c)
            mean[filled] += count[filled, g] * means[filled, g] / total[filled]
        for g in range(count.shape[1]):  # then sum(M2) + sum(c (m - mean)^2)
            spread[filled] += m2s[filled, g] + count[filled, g] * (means[filled, g] - mean[filled]) ** 2
        var = np.where(filled, spread / np.where(filled, total, 1.0), 0.0)
    s.write(op.dst, np.stack([mean, var], axis=1).astype(np.float32))


def _reduce_into(s: State, dst: k.Access, cmd: k.AccumCmd, reduce_res: k.Access | None,
                 values: np.ndarray) -> None:
    lane = lanes(dst)
    accumulate(s, s.dve, lane, cmd, k.AluOp.max, rows(values))
    if reduce_res is not None:
        s.write(reduce_res, s.read_registers(s.dve, lane).reshape(-1, 1))


def _max_only(op: k.AluOp | None) -> None:
    if op is not None and op != k.AluOp.max:
        raise InterpError(f"the reduction is max only, found {op.name}")


def run_select_reduce(s: State, op: kv.SelectReduce) -> None:
    _max_only(op.reduce_op)
    on_true = s.read(op.on_true).astype(np.float32)
    pred = s.read(op.predicate).reshape(on_true.shape).astype(bool)
    if op.reverse_pred:
        pred = ~pred
    on_false = np.asarray(s.operand(op.on_false, on_true), np.float32)
    out = np.where(pred, on_true, on_false)
    s.write(op.dst, out)
    _reduce_into(s, op.dst, op.reduce_cmd, op.reduce_res, out)


def run_copy_predicated(s: State, op: kv.CopyPredicated) -> None:
    src = s.read(op.src)
    elements, idx, shape = s.index(op.dst)
    pred = s.read(op.predicate).reshape(shape).astype(bool)
    if op.reverse_pred:
        pred = ~pred
    current = elements[idx]
    current[pred] = src.reshape(shape)[pred].astype(elements.dtype)
    elements[idx] = current
    mask = s.written_mask(k.access_tensor(op.dst), elements)
    if mask is not None:
        marks = mask[idx]
        marks |= pred
        mask[idx] = marks


def _affine(parts: int, pat: k.DataPattern) -> np.ndarray:
    grid = np.full((parts, 1), pat.offset, np.int64) + \
        np.arange(parts, dtype=np.int64)[:, None] * pat.channel_multiplier
    for pair in pat.pattern:
        grid = (grid[:, :, None] + np.arange(pair.num, dtype=np.int64)[None, None, :] * pair.step
                ).reshape(parts, -1)
    return grid


def run_affine_select(s: State, op: kv.NcAffineSelect) -> None:
    on_true = rows(s.read(op.on_true_tile)).astype(np.float32)
    compare = _COMPARE.get(op.cmp_op)
    if compare is None:
        raise InterpError(f"affine_select compares with {op.cmp_op.name}, not a comparison")
    keep = compare(_affine(on_true.shape[0], op.pred), 0)
    s.write(op.dst, np.where(keep, on_true, np.float32(op.on_false_value.value)))


def run_range_select(s: State, op: kv.NcRangeSelect) -> None:
    _max_only(op.reduce_op)
    on_true = rows(s.read(op.on_true_tile)).astype(np.float32)
    index = np.float32(op.range_start.value) + np.arange(on_true.shape[1], dtype=np.float32)
    b0 = s.read(op.bound0).reshape(-1, 1).astype(np.float32)
    b1 = s.read(op.bound1).reshape(-1, 1).astype(np.float32)
    cmp0, cmp1 = _COMPARE.get(op.comp_op0), _COMPARE.get(op.comp_op1)
    if cmp0 is None or cmp1 is None:
        raise InterpError("range_select compares with comparison operators only")
    keep = cmp0(index[None, :], b0) & cmp1(index[None, :], b1)
    out = np.where(keep, on_true, np.float32(op.on_false_value.value))
    s.write(op.dst, out)
    _reduce_into(s, op.dst, op.reduce_command, op.reduce_res, out)


def run_max8(s: State, op: kv.Max8) -> None:
    x = _f32_rows(s, op.src)
    s.write(op.dst, np.sort(x, axis=1)[:, ::-1][:, :8])  # numpy sorts NaN last: first here


def _absent_value(access: k.Access) -> int:
    dtype = np_dtype(k.access_tensor(access).dtype)
    return int(np.iinfo(dtype).max) if dtype.kind == "u" else -1


def run_find_index8(s: State, op: kv.FindIndex8) -> None:
    x, vals = _f32_rows(s, op.src), _f32_rows(s, op.vals)
    absent = _absent_value(op.dst)
    out = np.full((x.shape[0], 8), absent, np.int64)
    for p in range(x.shape[0]):
        row = list(x[p])
        for j in range(8):
            if vals[p, j] in row:
                out[p, j] = row.index(vals[p, j])
    s.write(op.dst, out.astype(np_dtype(k.access_tensor(op.dst).dtype)))


def run_match_replace8(s: State, op: kv.MatchReplace8) -> None:
    x, vals = _f32_rows(s, op.src), _f32_rows(s, op.vals)
    out = x.copy()
    absent = -1 if op.dst_idx is None else _absent_value(op.dst_idx)
    idx = np.full((x.shape[0], 8), absent, np.int64)
    for p in range(x.shape[0]):
        used: set[int] = set()
        for j in reversed(range(8)):
            for i in range(x.shape[1]):
                if i not in used and x[p, i] == vals[p, j]:
                    used.add(i)
                    idx[p, j] = i
                    out[p, i] = np.float32(op.replace_value.value)
                    break
    s.write(op.dst, out)
    if op.dst_idx is not None:
        s.write(op.dst_idx, idx.astype(np_dtype(k.access_tensor(op.dst_idx).dtype)))


def run_shuffle(s: State, op: kv.Shuffle) -> None:
    src = rows(s.read(op.src)).copy()
    elements, idx, shape = s.index(op.dst)
    current = elements[idx].reshape(shape[0], -1)
    mask = [imm.value for imm in op.shuffle_mask]
    if len(mask) != 32:
        raise InterpError(f"the shuffle mask has {len(mask)} entries, not 32")
    moved = np.zeros(shape[0], bool)
    for p in range(shape[0]):
        wanted = mask[p % 32]
        if wanted == 255:
            continue
        source = p - p % 32 + int(wanted)
        if not 0 <= source < src.shape[0]:
            raise InterpError(f"shuffle reads partition {source} of a {src.shape[0]}-partition "
                              f"source")
        current[p] = src[source].astype(elements.dtype)
        moved[p] = True
    elements[idx] = current.reshape(shape)
    mask_arr = s.written_mask(k.access_tensor(op.dst), elements)
    if mask_arr is not None:
        marks = mask_arr[idx].reshape(shape[0], -1)
        marks[moved] = True
        mask_arr[idx] = marks.reshape(shape)


def run_sequence_bounds(s: State, op: kv.SequenceBounds) -> None:
    ids = rows(s.read(op.segment_ids)).astype(np.float32)
    if ids.shape[0] != 1:
        raise InterpError(f"segment_ids has {ids.shape[0]} partitions, not 1")
    seq = list(ids[0])
    n = len(seq)
    start, end = [0] * n, [0] * n
    for i in range(n):
        start[i] = n if seq[i] == 0 else (start[i - 1] if i and seq[i] == seq[i - 1] else i)
    for i in reversed(range(n)):
        end[i] = -1 if seq[i] == 0 else (end[i + 1] if i < n - 1 and seq[i] == seq[i + 1] else i + 1)
    s.write(op.dst, np.array([start, end], np.float32))


def run_n_gather(s: State, op: kv.NcNGather) -> None:
    data = rows(s.read(op.data))
    idx = rows(s.read(op.indices)).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= data.shape[1]):
        raise InterpError(f"nc_n_gather index {int(idx.max())} outside the {data.shape[1]} elements "
                          f"of a partition")
    s.write(op.dst, data[np.arange(data.shape[0])[:, None], idx])


def run_local_gather(s: State, op: kv.NcLocalGather) -> None:
    src = rows(s.read(op.src))
    index = rows(s.read(op.index)).astype(np.int64)
    per = int(op.num_elem_per_idx.value)
    out = []
    for core in range(index.shape[0] // 16):
        flat = index[16 * core:16 * core + 16].flatten(order="F")
        if op.num_valid_indicies is not None:
            flat = flat[:int(op.num_valid_indicies.value)]
        for p in range(16 * core, 16 * core + 16):
            row: list[Any] = []
            for start in flat:
                if start + per > src.shape[1]:
                    raise InterpError(f"local_gather index {start} reads past the {src.shape[1]} "
                                      f"elements of partition {p}")
                row.extend(src[p, start:start + per])
            out.append(row)
    s.write(op.dst, np.array(out, dtype=src.dtype))


def run_nonzero_with_count(s: State, op: kv.NonzeroWithCount) -> None:
    src = rows(s.read(op.src))
    elements, idx, shape = s.index(op.dst)
    current = elements[idx].reshape(shape[0], -1)
    written = np.zeros(current.shape, bool)
    for p in range(0, src.shape[0], 16):
        found = [i + int(op.index_offset.value) for i, x in enumerate(src[p]) if x != 0]
        row = found + [int(op.padding_val.value)] * (src.shape[1] - len(found)) + [len(found)]
        current[p] = np.array(row, np.int64).astype(elements.dtype)
        written[p] = True
    elements[idx] = current.reshape(shape)
    mask = s.written_mask(k.access_tensor(op.dst), elements)
    if mask is not None:
        marks = mask[idx].reshape(current.shape)
        marks |= written
        mask[idx] = marks.reshape(shape)


RUNNERS: dict[type[Any], Callable[[State, Any], None]] = {
    kv.BatchNormStats: run_bn_stats, kv.BatchNormAggregate: run_bn_aggr,
    kv.SelectReduce: run_select_reduce, kv.CopyPredicated: run_copy_predicated,
    kv.NcAffineSelect: run_affine_select, kv.NcRangeSelect: run_range_select,
    kv.Max8: run_max8, kv.FindIndex8: run_find_index8, kv.MatchReplace8: run_match_replace8,
    kv.Shuffle: run_shuffle, kv.SequenceBounds: run_sequence_bounds, kv.NcNGather: run_n_gather,
    kv.NcLocalGather: run_local_gather, kv.NonzeroWithCount: run_nonzero_with_count,
}
