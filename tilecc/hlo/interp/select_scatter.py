"""select-and-scatter for the vectorized interpreter (the gradient of a max-pool).

Contract: `select_and_scatter_step(interp, inst)` evaluates
select-and-scatter(operand, source, init) with `window` (size, stride, pad; padding may be
negative, dilations are refused), `select` and `scatter` computations, as XLA's operation
semantics (SelectAndScatter) and HloEvaluator define it: for each window (one per source
element) the selected element starts as the window's first in-bounds element and each
following in-bounds element replaces it when select(selected, element) is false; padding is
never selected. The result starts as `init` everywhere and every source element is
combined into its window's selected position with `scatter`, one at a time in source
row-major order (gather's sequential rounds, so float sums round in XLA's order; windows
that do not overlap select distinct elements, which then take their one update at once).
The select fold runs one vectorized step per window element (all windows of all lanes at
once), not one per array element.
"""

from __future__ import annotations

import math
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tilecc.errors import InterpError
from tilecc.hlo.interp.elementwise import binary_op
from tilecc.hlo.interp.gather import combine_in_order, order_free_ufunc
from tilecc.hlo.interp.reduce import parse_window, reducer_opcode
from tilecc.hlo.interp.values import (Array, Lanes, Operands, Runner, Step, Value,
                                      lane_combiner)
from tilecc.hlo.ir import HloInstruction


def _window_positions(dims: tuple[int, ...], sizes: list[int], strides: list[int],
                      pads: list[tuple[int, int]]) -> Array:
    """(*window starts, W): the flat operand position of every window element, -1 for padding."""
    positions = np.arange(math.prod(dims), dtype=np.int64).reshape(dims)
    positions = positions[tuple(slice(max(-lo, 0), d - max(-hi, 0))
                                for d, (lo, hi) in zip(dims, pads))]
    if pads:  # numpy refuses an empty pad list (a scalar operand: one window of itself)
        positions = np.pad(positions, [(max(lo, 0), max(hi, 0)) for lo, hi in pads],
                           constant_values=-1)
    if any(s > n for s, n in zip(sizes, positions.shape)):
        return np.empty(tuple(0 for _ in dims) + (math.prod(sizes),), np.int64)
    view = sliding_window_view(positions, sizes)[tuple(slice(None, None, s) for s in strides)]
    return view.reshape(view.shape[:len(dims)] + (-1,))


def select_and_scatter_step(runner: Runner, inst: HloInstruction) -> Step:
    """The interpreter step of a select-and-scatter instruction; see the module contract."""
    if not inst.calls or len(inst.calls) != 2:
        raise InterpError(f"{inst.name}: select-and-scatter needs select= and scatter=")
    select_comp, scatter_comp = inst.calls
    dims = inst.operands[0].shape.dims
    sizes, strides, pads = parse_window(inst.attributes.get("window"), len(dims), inst.name)
    positions = _window_positions(dims, sizes, strides, pads)
    if positions.shape[:-1] != inst.operands[1].shape.dims:
        raise InterpError(f"{inst.name}: source {inst.operands[1].shape} does not have one "
                          f"element per window ({list(positions.shape[:-1])} windows)")
    select = lane_combiner(runner, select_comp)
    combine = lane_combiner(runner, scatter_comp)
    opcode = reducer_opcode(scatter_comp)
    t = inst.shape.element_type
    fast = binary_op(opcode, t) if opcode is not None else None
    at = order_free_ufunc(opcode, t)
    size = math.prod(dims)
    # windows that do not overlap select distinct elements: each target takes one update
    disjoint = all(stride >= extent for stride, extent in zip(strides, sizes))

    def step(a: Operands, d: Lanes) -> Value:
        operand, source, init = a
        assert isinstance(operand, np.ndarray) and isinstance(source, np.ndarray) \
            and isinstance(init, np.ndarray)
        lanes = operand.shape[0]
        flat = operand.reshape(lanes, -1)
        windows = positions.reshape(-1, positions.shape[-1])  # (windows, W)
        shape = (lanes, windows.shape[0])
        chosen = np.broadcast_to(windows[:, 0], shape).copy()
        valid = chosen >= 0
        value = flat[:, np.maximum(chosen[0], 0)]
        for k in range(1, windows.shape[1]):
            where = np.broadcast_to(windows[:, k], shape)
            candidate = flat[:, np.maximum(windows[:, k], 0)]
            keep = select([value.reshape(-1)], [candidate.reshape(-1)])[0].reshape(shape)
            take = (where >= 0) & (~valid | ~keep.astype(bool))
            value = np.where(take, candidate, value)
            chosen = np.where(take, where, chosen)
            valid |= where >= 0
        targets = (np.arange(lanes)[:, None] * size + chosen)[valid]
        items = source.reshape(lanes, -1)[valid]
        result = np.array(np.broadcast_to(init.reshape(lanes, 1), (lanes, size))).reshape(-1)
        if disjoint and fast is not None:
            result[targets] = fast(result[targets], items)
        else:
            combine_in_order([result], targets, [items], combine, fast, at)
        return result.reshape(operand.shape)
    return step
