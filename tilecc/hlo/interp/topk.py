"""The topk step: the k largest (or smallest) elements of the last dimension and their
indices, as XLA CPU computes them.

Contract: `topk(x), k=K, largest=true|false` has shape (values[..., K], s32 indices[..., K]).
XLA CPU decomposes topk into a stable sort of (value, iota) with a total-order comparison
(TopkDecomposer): floats order -NaN < -inf < ... < -0 < +0 < ... < inf < NaN, equal values
keep their index order; the first K of that order are the result.
"""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp.elementwise import total_order_key
from tilecc.hlo.interp.values import Lanes, Operands, Runner, Step, Value
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.types import is_floating


def topk_step(runner: Runner, inst: HloInstruction) -> Step:
    k_text = inst.attributes.get("k", "")
    if not k_text.isdigit():
        raise InterpError(f"{inst.name}: topk needs k=<count>")
    k = int(k_text)
    largest = inst.attributes.get("largest", "true") == "true"
    floating = is_floating(inst.operands[0].shape.element_type)

    def step(a: Operands, d: Lanes) -> Value:
        return top_k(a[0], k, largest, floating)
    return step


def top_k(x: np.ndarray, k: int, largest: bool,
          floating: bool) -> tuple[np.ndarray, np.ndarray]:
    """(values, s32 indices) of the first `k` of the last axis in XLA CPU's order: the
    total order of the values (descending when `largest`), equal values by index.
    `floating`: x holds an HLO float type (bf16 / fp8 are numpy void-kind records)."""
    if floating:
        key = total_order_key(x)
    elif x.dtype.kind == "u":  # u64 does not fit int64: shift the range instead
        key = (x.astype(np.uint64) ^ np.uint64(1 << 63)).view(np.int64)
    else:
        key = x.astype(np.int64)
    # ~key reverses the order without the overflow of -key at INT64_MIN
    order = np.argsort(~key if largest else key, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)
