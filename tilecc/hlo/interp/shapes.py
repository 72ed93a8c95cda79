"""Data-movement HLO ops for the vectorized interpreter (arrays carry a leading batch axis).

Contract: every function takes arrays shaped (B, *dims) -- B devices, or B scalar lanes when
a computation runs as a reducer -- and returns a new array (B, *result dims). Dimension
numbers in HLO attributes count the instruction's own dims, so axis k of HLO is axis k + 1
here. Index operands of dynamic-slice / dynamic-update-slice are (B,) arrays, one start per
device, clamped as XLA does (start = clamp(start, 0, dim - size)).
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.types import Shape, bit_width, numpy_dtype

Array = np.ndarray
_BRACED_INTS = re.compile(r"-?\d+")


def attribute_ints(inst: HloInstruction, name: str) -> list[int]:
    """The integers of a verbatim `name={1,2,3}` attribute; InterpError when it is missing."""
    text = inst.attributes.get(name)
    if text is None:
        raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} needs the {name} attribute")
    return [int(v) for v in _BRACED_INTS.findall(text)]


def broadcast_plan(dims: tuple[int, ...], out_dims: tuple[int, ...]
                   ) -> Callable[[Array], Array]:
    """x -> broadcast of x (B, *in dims) to (B, *out_dims), operand dim i going to result dim
    dims[i]; the permutation and shapes are worked out once, for repeated use."""
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    perm = [0] + [1 + i for i in order]
    in_order = perm == sorted(perm)
    shape = [1] * len(out_dims)
    for i in order:
        shape[dims[i]] = out_dims[dims[i]]
    kept, result = tuple(shape), tuple(out_dims)

    def apply(x: Array) -> Array:
        if not in_order:
            x = np.transpose(x, perm)
        lanes = x.shape[0]
        return np.broadcast_to(x.reshape((lanes,) + kept), (lanes,) + result)
    return apply


def slice_static(x: Array, starts: tuple[int, ...], limits: tuple[int, ...],
                 strides: tuple[int, ...] | None) -> Array:
    steps = strides or (1,) * len(starts)
    index = (slice(None),) + tuple(slice(b, e, s) for b, e, s in zip(starts, limits, steps))
    return x[index]


def _clamped_starts(starts: list[Array], dims: tuple[int, ...], sizes: tuple[int, ...]
                    ) -> np.ndarray:
    """(B, rank) int64 start indices, clamped into [0, dim - size]."""
    stacked = np.stack([np.asarray(s).astype(np.int64) for s in starts], axis=1)
    return np.clip(stacked, 0, np.array(dims, np.int64) - np.array(sizes, np.int64))


def dynamic_slice(x: Array, starts: list[Array], sizes: tuple[int, ...]) -> Array:
    begin = _clamped_starts(starts, x.shape[1:], sizes)
    if (begin == begin[0]).all():  # the common case: every device slices the same window
        return x[(slice(None),) + tuple(slice(b, b + n) for b, n in zip(begin[0], sizes))]
    return np.stack([x[(lane,) + tuple(slice(b, b + n) for b, n in zip(begin[lane], sizes))]
                     for lane in range(x.shape[0])])


def dynamic_update_slice(x: Array, update: Array, starts: list[Array]) -> Array:
    begin = _clamped_starts(starts, x.shape[1:], update.shape[1:])
    out = x.copy()
    if (begin == begin[0]).all():
        out[(slice(None),) + tuple(slice(b, b + n) for b, n in zip(begin[0], update.shape[1:]))] \
            = update
        return out
    for lane in range(x.shape[0]):
        out[(lane,) + tuple(slice(b, b + n) for b, n in zip(begin[lane], update.shape[1:]))] \
            = update[lane]
    return out


def parse_padding(inst: HloInstruction, rank: int) -> list[tuple[int, int, int]]:
    """`padding=0_1x2_3_1`: (low, high, interior) per dim; interior defaults to 0."""
    text = inst.attributes.get("padding")
    if text is None:
        raise InterpError(f"{inst.name}: pad needs the padding attribute")
    config: list[tuple[int, int, int]] = []
    for part in text.split("x") if rank else []:
        values = [int(v) for v in part.split("_")]
        if len(values) not in (2, 3):
            raise InterpError(f"{inst.name}: bad padding entry {part!r}")
        config.append((values[0], values[1], values[2] if len(values) == 3 else 0))
    if len(config) != rank:
        raise InterpError(f"{inst.name}: padding {text!r} has {len(config)} entries for "
                          f"rank {rank}")
    return config


def pad(x: Array, value: Array, config: list[tuple[int, int, int]],
        out_dims: tuple[int, ...]) -> Array:
    """XLA pad: interior padding first, then low / high edges (negative edges crop)."""
    lanes = x.shape[0]
    out = np.empty((lanes,) + tuple(out_dims), x.dtype)
    out[...] = value.reshape((lanes,) + (1,) * len(out_dims))
    # Place each source element at low + i * (interior + 1), skipping what falls outside.
    index: list[slice] = [slice(None)]
    source: list[slice] = [slice(None)]
    for (low, _high, interior), size, out_size in zip(config, x.shape[1:], out_dims):
        step = interior + 1
        first = 0 if low >= 0 else (-low + step - 1) // step
        last = min(size - 1, (out_size - 1 - low) // step)
        if last < first:
            return out
        index.append(slice(low + first * step, low + last * step + 1, step))
        source.append(slice(first, last + 1))
    out[tuple(index)] = x[tuple(source)]
    return out


def reverse(x: Array, dims: tuple[int, ...]) -> Array:
    return np.flip(x, axis=tuple(1 + d for d in dims)) if dims else x


def iota(lanes: int, dims: tuple[int, ...], dimension: int, dtype: np.dtype) -> Array:
    shape = [1] * len(dims)
    shape[dimension] = dims[dimension]
    values = np.arange(dims[dimension]).astype(dtype).reshape(shape)
    return np.broadcast_to(values, (lanes,) + tuple(dims))


# ---- handlers: (instruction, operand values) -> value -------------------------------------

def _slice(inst: HloInstruction, a: list[Array]) -> Array:
    if inst.slice_starts is None or inst.slice_limits is None:
        raise InterpError(f"{inst.name}: slice without a slice={{...}} attribute")
    return slice_static(a[0], inst.slice_starts, inst.slice_limits, inst.slice_strides)


def _bitcast(inst: HloInstruction, a: list[Array]) -> Array:
    """Reinterpret the operand's buffer in the result's layout (XLA's bitcast); the element
    type may change when both sides hold the same bytes (XLA CPU's optimized dumps bitcast
    bf16 to s16 for sorting)."""
    source, target = inst.operands[0].shape, inst.shape
    source_bits, target_bits = bit_width(source.element_type), bit_width(target.element_type)
    if source.element_count() * source_bits != target.element_count() * target_bits or \
            (source.element_type != target.element_type and min(source_bits, target_bits) < 8):
        raise InterpError(f"{inst.name}: bitcast between {source} and {target} is not "
                          "supported by the interpreter")
    lanes = a[0].shape[0]
    source_order = _major_to_minor(source)
    physical = np.transpose(a[0], [0] + [1 + d for d in source_order]).reshape(lanes, -1)
    if source.element_type != target.element_type:
        physical = np.ascontiguousarray(physical).view(numpy_dtype(target.element_type))
    target_order = _major_to_minor(target)
    shaped = physical.reshape((lanes,) + tuple(target.dims[d] for d in target_order))
    return np.transpose(shaped, [0] + [1 + target_order.index(d) for d in range(target.rank)])


def _major_to_minor(shape: Shape) -> list[int]:
    if shape.layout is None or not shape.layout.minor_to_major:
        return list(range(shape.rank))
    return list(reversed(shape.layout.minor_to_major))


HANDLERS: dict[HloOpcode, Callable[[HloInstruction, list[Array]], Array]] = {
    HloOpcode.BITCAST: _bitcast,
    HloOpcode.SLICE: _slice,
    HloOpcode.DYNAMIC_SLICE: lambda inst, a: dynamic_slice(
        a[0], a[1:], tuple(attribute_ints(inst, "dynamic_slice_sizes"))),
    HloOpcode.DYNAMIC_UPDATE_SLICE: lambda inst, a: dynamic_update_slice(a[0], a[1], a[2:]),
    HloOpcode.CONCATENATE: lambda inst, a: np.concatenate(a, axis=1 + (inst.dimensions or (0,))[0]),
    HloOpcode.PAD: lambda inst, a: pad(a[0], a[1], parse_padding(inst, inst.shape.rank),
                                       inst.shape.dims),
    HloOpcode.REVERSE: lambda inst, a: reverse(a[0], inst.dimensions or ()),
}
"""Data-movement opcodes -> handler(instruction, operand arrays); interp/steps.py gives each
of them the step that calls its handler."""
