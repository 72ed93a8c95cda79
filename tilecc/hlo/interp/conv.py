"""convolution for the vectorized interpreter, with XLA's general dimension numbers.

Contract: `convolution_op(inst)` returns conv(lhs, rhs) on (L, *lhs dims) / (L, *rhs dims)
arrays, giving (L, *result dims). It reads the verbatim attributes
- dim_labels `lhs_rhs->out` (required; b / f and spatial digits for lhs and out, o / i
  and spatial digits for rhs, each in any order),
- window {size stride pad lhs_dilate rhs_dilate rhs_reversal} (pads may be negative:
  they crop the base-dilated input),
- feature_group_count (input features split into groups, each convolved with its own
  slice of output features) and batch_group_count (input batch split group-major into
  groups, output features split likewise; XLA allows at most one of the two above 1).
Semantics follow XLA's operation semantics (Conv / ConvWithGeneralPadding): the input is
base-dilated (holes of zeros), padded, then each output position is the sum over input
features and the rhs-dilated kernel window. Integers are multiplied and accumulated in the
result type with wrap-around (bit-exact); pred ORs the ANDs; floats accumulate in f32 (f64
when f64 is involved) and round once to the result type (an integer result through the
operand type, dot.round_via), so f32 results differ from XLA CPU's only by accumulation
order. Whether the zeros of holes and padding multiply the kernel (0 * inf = NaN) or
contribute nothing is XLA CPU's choice per convolution (conv_zeros.multiplies_zeros); the
contribution-free sum is computed tap by tap only when a kernel value is inf or NaN (with
finite kernels both sums are equal). Where XLA's group rewrites let other groups' zeros
meet inf / NaN (conv_zeros: batch_group_expansion, expands_feature_groups), those outputs
are NaN.
"""

from __future__ import annotations

import math
import re
from typing import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tilecc.errors import InterpError
from tilecc.hlo.interp.conv_zeros import ConvGeometry, expands_feature_groups, multiplies_zeros
from tilecc.hlo.interp.dot import round_via
from tilecc.hlo.interp.values import Runner, Step
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.types import PrimitiveType, is_complex, is_floating, numpy_dtype

Array = np.ndarray
_LABELS = re.compile(r"^(\w+)_(\w+)->(\w+)$")


_Window = tuple[list[int], list[int], list[tuple[int, int]], list[int], list[int], list[int]]


def _window(inst: HloInstruction, spatial: int) -> _Window:
    """(size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal), one entry per spatial dim."""
    text = inst.attributes.get("window", "{}")
    fields = dict(item.split("=", 1) for item in text.strip("{} ").split() if "=" in item)
    unknown = set(fields) - {"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"}
    if unknown:
        raise InterpError(f"{inst.name}: convolution window field(s) {sorted(unknown)} are not "
                          "supported by the interpreter")

    def ints(key: str, default: int) -> list[int]:
        values = [int(v) for v in fields[key].split("x")] if key in fields else [default] * spatial
        if len(values) != spatial:
            raise InterpError(f"{inst.name}: window {key} {fields[key]} does not have {spatial} "
                              "entries")
        return values

    def reversal(sizes: list[int]) -> list[int]:
        # XLA's parser (jaxlib 0.10) reads a short rhs_reversal past its end; reversing a
        # size-1 window is the identity whatever it reads there, so only those may be missing
        values = [int(v) for v in fields["rhs_reversal"].split("x")]
        if len(values) < spatial and all(k == 1 for k in sizes[len(values):]):
            return values + [0] * (spatial - len(values))
        return ints("rhs_reversal", 0)

    def pad(text: str) -> tuple[int, int]:
        match = re.fullmatch(r"(-?\d+)_(-?\d+)", text)
        if match is None:
            raise InterpError(f"{inst.name}: window pad {text} is not LOW_HIGH")
        return int(match[1]), int(match[2])

    pads = [pad(p) for p in fields["pad"].split("x")] if "pad" in fields else [(0, 0)] * spatial
    if len(pads) != spatial:
        raise InterpError(f"{inst.name}: window pad does not have {spatial} entries")
    sizes = ints("size", 1)
    return (sizes, ints("stride", 1), pads, ints("lhs_dilate", 1), ints("rhs_dilate", 1),
            reversal(sizes) if "rhs_reversal" in fields else [0] * spatial)


def _layout(labels: str, batch: str, feature: str, rank: int, what: str,
            inst: HloInstruction) -> list[int]:
    """Positions of [batch, feature, spatial 0, spatial 1, ...] in an operand's dims."""
    spatial = sorted(c for c in labels if c.isdigit())
    if (len(labels) != rank or sorted(labels) != sorted([batch, feature] + spatial)
            or spatial != [str(k) for k in range(len(spatial))]):
        raise InterpError(f"{inst.name}: dim_labels {what} '{labels}' does not label the "
                          f"{rank} dims with {batch}, {feature} and spatial digits")
    return [labels.index(batch), labels.index(feature)] + \
        [labels.index(str(k)) for k in range(len(spatial))]


def _group_count(inst: HloInstruction, name: str) -> int:
    count = int(inst.attributes.get(name, "1"))
    if count < 1:
        raise InterpError(f"{inst.name}: {name}={count} must be positive")
    return count


def convolution_op(inst: HloInstruction) -> Callable[[Array, Array], Array]:
    """conv(lhs, rhs) for `inst`; see the module contract."""
    if len(inst.operands) != 2:
        raise InterpError(f"{inst.name}: convolution takes two operands")
    lhs_shape, rhs_shape, out_shape = inst.operands[0].shape, inst.operands[1].shape, inst.shape
    labels = _LABELS.match(inst.attributes.get("dim_labels", ""))
    if labels is None:
        raise InterpError(f"{inst.name}: convolution needs dim_labels=<lhs>_<rhs>-><out>")
    lhs_pos = _layout(labels.group(1), "b", "f", lhs_shape.rank, "lhs", inst)
    rhs_pos = _layout(labels.group(2), "o", "i", rhs_shape.rank, "rhs", inst)
    out_pos = _layout(labels.group(3), "b", "f", out_shape.rank, "output", inst)
    n = len(lhs_pos) - 2
    if len(rhs_pos) - 2 != n or len(out_pos) - 2 != n:
        raise InterpError(f"{inst.name}: dim_labels disagree on the number of spatial dims")
    sizes, strides, pads, lhs_dilate, rhs_dilate, reversal = _window(inst, n)
    groups = _group_count(inst, "feature_group_count")
    batch_groups = _group_count(inst, "batch_group_count")
    if groups > 1 and batch_groups > 1:
        raise InterpError(f"{inst.name}: feature_group_count and batch_group_count are both "
                          "above 1")
    batch, features = (lhs_shape.dims[lhs_pos[0]], lhs_shape.dims[lhs_pos[1]])
    out_features = rhs_shape.dims[rhs_pos[0]]
    if batch % batch_groups or features % groups or out_features % (groups * batch_groups) \
            or rhs_shape.dims[rhs_pos[1]] * groups != features:
        raise InterpError(f"{inst.name}: convolution feature / batch groups do not divide "
                          f"lhs {lhs_shape} / rhs {rhs_shape}")
    if [rhs_shape.dims[p] for p in rhs_pos[2:]] != sizes:
        raise InterpError(f"{inst.name}: window sizes {sizes} do not match the kernel {rhs_shape}")
    out_spatial = [out_shape.dims[p] for p in out_pos[2:]]
    want = [max((((s - 1) * ld + 1 if s else 0) + lo + hi - (k - 1) * rd - 1) // st + 1, 0)
            for s, ld, (lo, hi), k, rd, st in zip([lhs_shape.dims[p] for p in lhs_pos[2:]],
                                                  lhs_dilate, pads, sizes, rhs_dilate, strides)]
    if out_spatial != want or out_shape.dims[out_pos[0]] != batch // batch_groups \
            or out_shape.dims[out_pos[1]] != out_features:
        raise InterpError(f"{inst.name}: convolution result {out_shape} does not match its "
                          f"operands (spatial sizes {want})")
    # the result computed as (L, b, spatial..., f) -> the result's dim order
    computed_axis = [1, 2 + n] + list(range(2, 2 + n))  # of b, f, spatial 0, 1, ...
    out_perm = [0] * (1 + out_shape.rank)
    for label, dim in enumerate(out_pos):
        out_perm[1 + dim] = computed_axis[label]
    compute_shape = (batch // batch_groups, out_features) + tuple(out_spatial)
    result_type, lhs_type = out_shape.element_type, lhs_shape.element_type
    operand_types = (lhs_shape.element_type, rhs_shape.element_type)
    floating = is_floating(result_type) or any(is_floating(t) for t in operand_types)
    types = set(operand_types + (result_type,))
    if PrimitiveType.PRED in types and types != {PrimitiveType.PRED}:
        raise InterpError(f"{inst.name}: convolution mixes pred with other types "
                          f"{sorted(t.name.lower() for t in types)}")
    # pred: the loop emitter's accumulator ORs the ANDs (EmitMulAdd), numpy's bool matmul
    wide_type = (PrimitiveType.F64 if PrimitiveType.F64 in types else PrimitiveType.F32) \
        if floating else result_type
    wide = numpy_dtype(wide_type)
    in_spatial = [lhs_shape.dims[p] for p in lhs_pos[2:]]
    canonical = [0, n + 1] + list(range(1, n + 1))
    geometry = ConvGeometry(
        element_type=lhs_type, result_type=result_type,
        canonical=lhs_pos == canonical and out_pos == canonical
        and rhs_pos == [n + 1, n] + list(range(n)),
        in_entry=_in_entry(inst), batch=batch, in_spatial=in_spatial, kernel_spatial=sizes,
        out_features=out_features, strides=strides, lhs_dilate=lhs_dilate,
        rhs_dilate=rhs_dilate, reversal=reversal, feature_groups=groups,
        group_features=features // groups, batch_groups=batch_groups,
        element_counts=(lhs_shape.element_count(), rhs_shape.element_count(),
                        out_shape.element_count()))
    multiply = multiplies_zeros(geometry)
    inexact = floating or any(is_complex(t) for t in types)
    zeros_met = any(d > 1 and s > 1 for d, s in zip(lhs_dilate, in_spatial)) or \
        any(lo > 0 or hi > 0 for lo, hi in pads)
    # SKIP differs from multiplying the zeros only where a kernel value is inf or NaN
    taps = _window_taps(in_spatial, out_spatial, sizes, strides, pads, lhs_dilate, rhs_dilate) \
        if inexact and zeros_met and not multiply else None
    # MULTIPLY with batch groups as a spatial dim: each output group also meets the other
    # groups' kernels through holes (batch_group_expansion), NaN from any inf / NaN there
    cross_groups = inexact and multiply and batch_groups > 1 and \
        not (batch == batch_groups and out_features == batch_groups)
    cross_features = inexact and expands_feature_groups(geometry)

    def windows(x: Array) -> Array:
        """(L, bg, bo, *out spatial, *kernel, g, cg) views of base-dilated, padded x
        (L, B, *spatial, C): the input feature stays the innermost, contiguous axis."""
        lanes = x.shape[0]
        inner = (slice(None),) * 2
        if any(d > 1 for d in lhs_dilate):
            dilated = np.zeros(x.shape[:2] + tuple((s - 1) * d + 1 if s else 0 for s, d in
                                                   zip(x.shape[2:-1], lhs_dilate))
                               + x.shape[-1:], x.dtype)
            dilated[inner + tuple(slice(None, None, d) for d in lhs_dilate)] = x
            x = dilated
        crop = tuple(slice(max(-lo, 0), s - max(-hi, 0))
                     for s, (lo, hi) in zip(x.shape[2:-1], pads))
        x = x[inner + crop]
        if any(lo > 0 or hi > 0 for lo, hi in pads):  # zeros around x (np.pad: 6x slower)
            padded = np.zeros(x.shape[:2] + tuple(s + max(lo, 0) + max(hi, 0) for s, (lo, hi)
                                                  in zip(x.shape[2:-1], pads)) + x.shape[-1:],
                              x.dtype)
            padded[inner + tuple(slice(max(lo, 0), max(lo, 0) + s) for s, (lo, _) in
                                 zip(x.shape[2:-1], pads))] = x
            x = padded
        spans = [(k - 1) * d + 1 for k, d in zip(sizes, rhs_dilate)]
        view = sliding_window_view(x, spans, axis=tuple(range(2, 2 + n)))
        picks = tuple(slice(None, s * (o - 1) + 1, s) for s, o in zip(strides, out_spatial)) + \
            (slice(None),) + tuple(slice(None, None, d) for d in rhs_dilate)
        view = view[inner + picks]  # (L, B, *out spatial, C, *kernel)
        view = np.moveaxis(view, 2 + n, -1)
        return view.reshape((lanes, batch_groups, batch // batch_groups) + tuple(out_spatial)
                            + tuple(sizes) + (groups, features // groups))

    def conv(lhs: Array, rhs: Array) -> Array:
        lanes = lhs.shape[0]
        if 0 in out_spatial or 0 in sizes or 0 in compute_shape:
            return np.zeros((lanes,) + out_shape.dims, numpy_dtype(result_type))
        x = np.transpose(lhs, [0, 1 + lhs_pos[0]] + [1 + p for p in lhs_pos[2:]]
                         + [1 + lhs_pos[1]]).astype(wide, copy=False)
        w = np.transpose(rhs, [0] + [1 + p for p in rhs_pos]).astype(wide, copy=False)
        if any(reversal):
            w = np.flip(w, axis=tuple(3 + k for k, r in enumerate(reversal) if r))
        w = w.reshape((lanes, batch_groups, groups, out_features // (groups * batch_groups),
                       features // groups) + tuple(sizes))
        # a batched matmul per (lane, batch group, feature group): rows are (image, output
        # position), columns (kernel element, input feature) -- the copy of the windows into
        # rows then moves runs of whole feature vectors (a kernel row of them when the
        # features are not grouped), not single elements
        bo, og, cg = batch // batch_groups, out_features // (groups * batch_groups), \
            features // groups
        spatial_axes = tuple(range(3, 3 + n))
        kernel_axes = tuple(range(3 + n, 3 + 2 * n))
        views = windows(x)
        rows = np.transpose(views, (0, 1, 3 + 2 * n, 2) + spatial_axes + kernel_axes
                            + (4 + 2 * n,))
        rows = rows.reshape(lanes, batch_groups, groups, bo * math.prod(out_spatial), -1)
        cols = np.transpose(w, (0, 1, 2) + tuple(range(5, 5 + n)) + (4, 3))
        cols = cols.reshape(lanes, batch_groups, groups, math.prod(sizes) * cg, og)
        if taps is not None and not np.isfinite(cols).all():
            out = _matmul_on_taps(rows, cols, taps)
        else:
            out = np.matmul(rows, cols)
        if cross_groups and not np.isfinite(w).all():
            bad = ~np.isfinite(w).all(axis=tuple(range(4, w.ndim)))[:, :, 0]  # (L, bg, og)
            others = bad.sum(axis=1, keepdims=True) - bad > 0
            out = np.where(others[:, :, None, None, :], np.nan, out)
        if cross_features and not np.isfinite(x).all():
            # (L, bg, bo, *out spatial, g): an inf / NaN input of that group in the window
            # (holes and padding are finite zeros), NaN for every other group's outputs
            bad = ~np.isfinite(views).all(axis=kernel_axes + (4 + 2 * n,))
            others = bad.sum(axis=-1, keepdims=True) - bad > 0
            others = np.moveaxis(others.reshape(lanes, batch_groups, -1, groups), 3, 2)
            out = np.where(others[..., None], np.nan, out)
        out = out.reshape((lanes, batch_groups, groups, bo) + tuple(out_spatial) + (og,))
        # output feature (batch group, feature group, o) next to o: without groups the
        # reshape is a view and a b01f result is the matmul's own contiguous array
        out = np.transpose(out, (0, 3) + tuple(range(4, 4 + n)) + (1, 2, 4 + n))
        out = out.reshape((lanes, bo) + tuple(out_spatial) + (out_features,))
        out = np.transpose(out, out_perm)
        return round_via(wide_type, lhs_type, result_type, out) if floating else out

    return conv


def _in_entry(inst: HloInstruction) -> bool:
    """Whether XLA's convolution passes see `inst` in the entry computation: there, or in a
    computation the entry reaches through `call`s alone (XLA CPU inlines those; measured:
    a convolution called from two sites is canonicalized)."""
    comp = inst.parent
    module = comp.parent if comp is not None else None
    if comp is None or module is None or module.entry is comp:
        return True
    return any(caller.opcode is HloOpcode.CALL and caller.to_apply is comp
               and _in_entry(caller)
               for other in module.computations for caller in other.instructions)


def _window_taps(in_spatial: list[int], out_spatial: list[int], sizes: list[int],
                 strides: list[int], pads: list[tuple[int, int]], lhs_dilate: list[int],
                 rhs_dilate: list[int]) -> Array:
    """(output positions, kernel positions) bool, both flattened in dim order: whether the
    kernel position of that output's window lands on an input element (not a hole, not
    padding)."""
    taps = np.ones((1, 1), bool)
    for s, o, k, st, (lo, _), ld, rd in zip(in_spatial, out_spatial, sizes, strides, pads,
                                             lhs_dilate, rhs_dilate):
        q = np.arange(o)[:, None] * st + np.arange(k)[None, :] * rd - lo  # base-dilated index
        on = (q >= 0) & (q <= (s - 1) * ld) & (q % ld == 0)
        taps = (taps[:, None, :, None] & on[None, :, None, :]).reshape(
            taps.shape[0] * o, taps.shape[1] * k)
    return taps


def _matmul_on_taps(rows: Array, cols: Array, taps: Array) -> Array:
    """rows @ cols summing, per output position, only the kernel positions `taps` marks:
    rows (..., images * positions, taps * features), cols (..., taps * features, o)."""
    positions, count = taps.shape
    lead = rows.shape[:-2]
    r = rows.reshape(lead + (-1, positions, count, rows.shape[-1] // count))
    c = cols.reshape(lead + (1, count, cols.shape[-2] // count, cols.shape[-1]))
    out = np.zeros(lead + r.shape[-4:-2] + cols.shape[-1:], np.result_type(rows, cols))
    for k in np.flatnonzero(taps.any(axis=0)):
        out += np.where(taps[:, k, None], np.matmul(r[..., k, :], c[..., k, :, :]), 0)
    return out.reshape(rows.shape[:-1] + cols.shape[-1:])


def convolution_step(runner: Runner, inst: HloInstruction) -> Step:
    """The interpreter step of a convolution instruction."""
    fn = convolution_op(inst)
    return lambda a, d: fn(a[0], a[1])
