"""gather and scatter for the vectorized interpreter, with XLA's general dimension numbers.

Contract:
- `gather_op(inst)` returns gather(operand, start_indices) on (L, *dims) arrays. Dimension
  numbers come from the verbatim attributes offset_dims, collapsed_slice_dims,
  start_index_map, operand_batching_dims, start_indices_batching_dims, index_vector_dim
  (equal to the indices' rank = an implicit trailing vector of length 1) and slice_sizes.
  Every start index is clamped to [0, operand_dim - slice_size] as XLA specifies
  (operation semantics, Gather), so a gather never reads out of bounds.
- `scatter_op(inst, combine, opcode)` returns scatter(operands..., indices, updates...)
  (variadic: N operands, N updates, a tuple result for N > 1) with update_window_dims,
  inserted_window_dims, scatter_dims_to_operand_dims, input_batching_dims,
  scatter_indices_batching_dims and index_vector_dim. An update window whose start index
  puts any part of it outside the operand is skipped whole (XLA's ScatterExpander check
  0 <= start <= operand_dim - window_size). Updates combine into the operand one at a time
  in the order of the update array (scatter indices row-major, then the window), XLA CPU's
  sequential order, so `overwrite` (to_apply returning its second parameter) keeps the
  last update and float sums round in XLA's order. `opcode` is the to_apply's standard
  reducer opcode (reduce.reducer_opcode) or None; the general path evaluates the
  to_apply on flat lanes with `combine`, in rounds: round k applies, at once, the k-th
  update of every target element, so the cost is vectorized per round and the number of
  rounds is the largest number of updates meeting one element. Integer add / multiply /
  max / min / and / or / xor (order-independent with wrap-around) use numpy's ufunc.at
  on single elements. The trailing operand dims every window spans whole are contiguous
  in each window: with a standard reducer whole rows of them combine in that order
  (row_fold.fold_rows: one sort, then per cached block of rows one in-place op a round).
- indices_are_sorted / unique_indices are hints and do not change the result computed here.
"""

from __future__ import annotations

import math
import re
from typing import Callable

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp.elementwise import binary_op
from tilecc.hlo.interp.reduce import reducer_opcode
from tilecc.hlo.interp.sub_byte import is_sub_byte
from tilecc.hlo.interp.row_fold import fold_rows
from tilecc.hlo.interp.values import (Array, LaneCombiner, Lanes, Operands, Runner, Step,
                                      Value, called_computation, lane_combiner,
                                      single_or_tuple)
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import PrimitiveType, is_floating

_INTS = re.compile(r"-?\d+")
_INT_UFUNCS = {Op.ADD: np.add, Op.MULTIPLY: np.multiply, Op.MAXIMUM: np.maximum,
               Op.MINIMUM: np.minimum, Op.AND: np.bitwise_and, Op.OR: np.bitwise_or,
               Op.XOR: np.bitwise_xor}


def _dims(inst: HloInstruction, name: str, required: bool = False) -> list[int]:
    text = inst.attributes.get(name)
    if text is None:
        if required:
            raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} needs the {name} attribute")
        return []
    return [int(v) for v in _INTS.findall(text)]


def _index_vector_dim(inst: HloInstruction, indices_rank: int) -> int:
    text = inst.attributes.get("index_vector_dim")
    ivd = int(text) if text is not None else indices_rank
    if not 0 <= ivd <= indices_rank:
        raise InterpError(f"{inst.name}: index_vector_dim={ivd} is outside the indices' rank "
                          f"{indices_rank}")
    return ivd


def _start_vectors(indices: Array, ivd: int) -> Array:
    """(L, *batch dims, K) int64 start vectors; an unsigned index too large for int64 is
    saturated (it is out of bounds either way)."""
    if indices.dtype.kind not in "iu":
        raise InterpError(f"start indices must be integers, got {indices.dtype}")
    if indices.dtype.kind == "u" and indices.dtype.itemsize == 8:
        indices = np.minimum(indices, np.uint64(2**62))
    wide = indices.astype(np.int64)
    if ivd == indices.ndim - 1:  # lane axis shifts index_vector_dim by one
        return wide[..., None]
    return np.moveaxis(wide, ivd + 1, -1)


def _batch_position(indices_dim: int, ivd: int) -> int:
    """Position among the batch dims (indices dims without index_vector_dim) of an indices dim."""
    return indices_dim - (1 if indices_dim > ivd else 0)


def _starts(starts: Array, rank: int, index_map: list[int], operand_batching: list[int],
            indices_batching: list[int], ivd: int) -> list[Array | int]:
    """Per operand dim, the start of every batch element: (L, *batch dims) arrays (or 0)."""
    per_dim: list[Array | int] = [0] * rank
    for k, dim in enumerate(index_map):
        per_dim[dim] = starts[..., k]
    batch_shape = starts.shape[1:-1]
    for o_dim, i_dim in zip(operand_batching, indices_batching):
        pos = _batch_position(i_dim, ivd)
        shape = [1] * (1 + len(batch_shape))
        shape[1 + pos] = batch_shape[pos]
        per_dim[o_dim] = np.arange(batch_shape[pos]).reshape(shape)
    return per_dim


def gather_op(inst: HloInstruction) -> Callable[[Array, Array], Array]:
    """gather(operand, start_indices) for `inst`; see the module contract."""
    operand_dims = inst.operands[0].shape.dims
    indices_rank = inst.operands[1].shape.rank
    rank = len(operand_dims)
    offset_dims = _dims(inst, "offset_dims")
    collapsed = _dims(inst, "collapsed_slice_dims")
    index_map = _dims(inst, "start_index_map", required=True)
    operand_batching = _dims(inst, "operand_batching_dims")
    indices_batching = _dims(inst, "start_indices_batching_dims")
    slice_sizes = _dims(inst, "slice_sizes", required=True)
    ivd = _index_vector_dim(inst, indices_rank)
    if len(slice_sizes) != rank or len(operand_batching) != len(indices_batching):
        raise InterpError(f"{inst.name}: gather slice_sizes / batching dims do not fit operand "
                          f"rank {rank}")
    window = [d for d in range(rank) if d not in collapsed and d not in operand_batching]
    if len(window) != len(offset_dims):
        raise InterpError(f"{inst.name}: gather has {len(offset_dims)} offset_dims for "
                          f"{len(window)} uncollapsed slice dims")
    out_rank = inst.shape.rank
    batch_out = [d for d in range(out_rank) if d not in offset_dims]
    # a window dim the slice spans whole starts at 0 (the clamp): a basic slice, so numpy
    # copies whole rows instead of building an index per element
    whole = [d for d in window if slice_sizes[d] == operand_dims[d]]
    indexed = [d for d in window if d not in whole]
    computed = indexed + whole  # numpy puts the sliced dims after the broadcast index dims
    # result axes as computed: lane, batch dims, indexed then whole window dims -> XLA's order
    perm = [0] * (1 + out_rank)
    for pos, d in enumerate(batch_out):
        perm[1 + d] = 1 + pos
    for pos, d in enumerate(offset_dims):
        perm[1 + d] = 1 + len(batch_out) + computed.index(window[pos])
    limits = [max(n - s, 0) for n, s in zip(operand_dims, slice_sizes)]

    def gather(operand: Array, indices: Array) -> Array:
        starts = _start_vectors(indices, ivd)
        nb = starts.ndim - 2
        per_dim = _starts(starts, rank, index_map, operand_batching, indices_batching, ivd)
        tail = (1,) * len(indexed)
        index: list[Array | slice] = [
            np.arange(operand.shape[0]).reshape((-1,) + (1,) * nb + tail)]
        for d in range(rank):
            if d in whole:
                index.append(slice(None))
                continue
            start = per_dim[d]
            if d in index_map:
                start = np.clip(start, 0, limits[d])
            start = np.asarray(start).reshape(np.shape(start) + tail) if np.ndim(start) \
                else np.asarray(start)
            if d in window:
                shape = [1] * (1 + nb + len(indexed))
                shape[1 + nb + indexed.index(d)] = slice_sizes[d]
                start = start + np.arange(slice_sizes[d]).reshape(shape)
            index.append(start)
        return np.transpose(operand[tuple(index)], perm)

    return gather


def scatter_op(inst: HloInstruction, combine: LaneCombiner,
               opcode: Op | None) -> Callable[[list[Array]], list[Array]]:
    """scatter([operands..., indices, updates...]) -> results; see the module contract."""
    n = len(inst.operands) // 2
    if len(inst.operands) != 2 * n + 1 or n < 1:
        raise InterpError(f"{inst.name}: scatter needs N operands, indices and N updates")
    operand_dims = inst.operands[0].shape.dims
    update_dims = inst.operands[n + 1].shape.dims
    rank = len(operand_dims)
    window_dims = _dims(inst, "update_window_dims")
    inserted = _dims(inst, "inserted_window_dims")
    index_map = _dims(inst, "scatter_dims_to_operand_dims", required=True)
    operand_batching = _dims(inst, "input_batching_dims")
    indices_batching = _dims(inst, "scatter_indices_batching_dims")
    ivd = _index_vector_dim(inst, inst.operands[n].shape.rank)
    window = [d for d in range(rank) if d not in inserted and d not in operand_batching]
    if len(window) != len(window_dims) or len(operand_batching) != len(indices_batching):
        raise InterpError(f"{inst.name}: scatter has {len(window_dims)} update_window_dims for "
                          f"{len(window)} operand window dims")
    scatter_dims = [d for d in range(len(update_dims)) if d not in window_dims]
    window_size = [1] * rank
    for d, u in zip(window, window_dims):
        window_size[d] = update_dims[u]
    element_type = inst.operands[0].shape.element_type
    fast = binary_op(opcode, element_type) if opcode is not None and n == 1 else None
    at = order_free_ufunc(opcode, element_type) if n == 1 else None
    # the trailing operand dims every window spans whole are contiguous in each window:
    # their `row` elements are combined as one row (targets and ranks are per row)
    row_dims: list[int] = []
    for d in reversed(window):
        if d != rank - 1 - len(row_dims) or window_size[d] != operand_dims[d]:
            break
        row_dims.append(d)
    row = math.prod(operand_dims[d] for d in row_dims)
    indexed = [d for d in window if d not in row_dims]
    order = [0] + [1 + d for d in scatter_dims] + [1 + d for d in window_dims]
    # windows that span each operand dim whole or in one element never partly overlap
    disjoint = all(size in (1, dim) for size, dim in zip(window_size, operand_dims))

    def scatter(values: list[Array]) -> list[Array]:
        operands, indices, updates = values[:n], values[n], values[n + 1:]
        lanes = operands[0].shape[0]
        # C order: the flat row views below must be views of the results, not copies
        results = [np.array(x, order="C") for x in operands]
        if row == 0:
            return results
        starts = _start_vectors(indices, ivd)
        nb = starts.ndim - 2
        per_dim = _starts(starts, rank, index_map, operand_batching, indices_batching, ivd)
        valid = np.ones((lanes,) + starts.shape[1:-1], bool)
        for d in index_map:
            start = per_dim[d]
            valid &= (start >= 0) & (start <= operand_dims[d] - window_size[d])
        tail = (1,) * len(indexed)
        flat = np.arange(lanes).reshape((-1,) + (1,) * (nb + len(indexed)))
        for d in range(rank - len(row_dims)):  # the row index of each window element
            start = per_dim[d]
            position = np.asarray(start).reshape(np.shape(start) + tail) if np.ndim(start) \
                else np.asarray(start)
            if d in indexed:
                shape = [1] * (1 + nb + len(indexed))
                shape[1 + nb + indexed.index(d)] = window_size[d]
                position = position + np.arange(window_size[d]).reshape(shape)
            flat = flat * operand_dims[d] + position
        full = (lanes,) + starts.shape[1:-1] + tuple(window_size[d] for d in indexed)
        keep = np.broadcast_to(valid.reshape(valid.shape + tail), full).reshape(-1)
        targets = np.broadcast_to(flat, full).reshape(-1)[keep]
        rows = [r.reshape(-1, row) for r in results]
        sources = [np.transpose(u, order).reshape(-1, row) for u in updates]
        if fast is not None and not (at is not None and row == 1):
            assert opcode is not None
            fold_rows(rows[0], targets, sources[0], np.flatnonzero(keep), opcode,
                      element_type, fast)
            return results
        items = [source[keep] for source in sources]
        ranks = None
        if disjoint and at is None:  # rank whole windows: their rows arrive together
            corner = np.broadcast_to(flat, full)[(Ellipsis,) + (0,) * len(indexed)]
            ranks = np.repeat(arrival_ranks(corner[valid]), math.prod(full[1 + nb:]))
        if at is not None and row == 1:
            combine_in_order(rows, targets, items, combine, fast, at, ranks)
        else:  # the to_apply runs on flat lanes: one element per lane
            cells = (targets[:, None] * row + np.arange(row)).reshape(-1)
            combine_in_order([r.reshape(-1) for r in results], cells,
                             [item.reshape(-1) for item in items], combine, None, None,
                             None if ranks is None else np.repeat(ranks, row))
        return results

    return scatter


def order_free_ufunc(opcode: Op | None, t: PrimitiveType) -> np.ufunc | None:
    """The numpy ufunc of a reducer opcode whose result on integers `t` does not depend on
    the order updates are applied in (wrap-around add / multiply, max, min, bit ops). Float
    ops keep the rounds: XLA CPU flushes subnormal operands and results at every update;
    sub-byte integers too (numpy has no loops of its own for ml_dtypes' int4 / uint4 ...)."""
    if opcode is None or is_floating(t) or t == PrimitiveType.PRED or is_sub_byte(t):
        return None
    return _INT_UFUNCS.get(opcode)


def arrival_ranks(keys: Array) -> Array:
    """For each j, how many earlier entries of `keys` equal keys[j]."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    first = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    group_start = np.maximum.accumulate(np.where(first, np.arange(keys.size), 0))
    ranks = np.empty(keys.size, np.int64)
    ranks[order] = np.arange(keys.size) - group_start
    return ranks


def combine_in_order(results: list[Array], targets: Array, items: list[Array],
                     combine: LaneCombiner, fast: Callable[[Array, Array], Array] | None,
                     at: np.ufunc | None, ranks: Array | None = None) -> None:
    """Combine items[k][j] into results[k][targets[j]] in j order, in rounds (see contract);
    `at` is an integer ufunc whose result does not depend on the order (ufunc.at); `ranks`
    are the arrival_ranks of targets when the caller knows them more cheaply."""
    if targets.size == 0:
        return
    if at is not None:
        at.at(results[0], targets, items[0])
        return
    if ranks is None:
        ranks = arrival_ranks(targets)
    rounds = np.bincount(ranks)
    # a stable sort of small keys is a radix sort in numpy
    by_round = np.argsort(ranks.astype(np.uint16) if rounds.size <= 1 << 16 else ranks,
                          kind="stable")
    bounds = np.cumsum(rounds)
    for lo, hi in zip(np.r_[0, bounds[:-1]], bounds):
        pick = by_round[lo:hi]
        where = targets[pick]
        now = [res[where] for res in results]
        new = [item[pick] for item in items]
        out = [fast(now[0], new[0])] if fast is not None else combine(now, new)
        for res, value in zip(results, out):
            res[where] = value


def gather_step(runner: Runner, inst: HloInstruction) -> Step:
    """The interpreter step of a gather instruction."""
    fn = gather_op(inst)
    return lambda a, d: fn(a[0], a[1])


def scatter_step(runner: Runner, inst: HloInstruction) -> Step:
    """The interpreter step of a scatter instruction (its to_apply run on flat lanes)."""
    comp = called_computation(inst)
    fn = scatter_op(inst, lane_combiner(runner, comp), reducer_opcode(comp))

    def step(a: Operands, d: Lanes) -> Value:
        return single_or_tuple(inst, fn(list(a)))
    return step
