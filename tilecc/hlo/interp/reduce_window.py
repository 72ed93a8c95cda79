"""reduce-window as XLA CPU computes it: the init value once per output element, then the
window's elements, padding and base-dilation holes skipped.

Semantics (XLA's HloEvaluator, IterateThroughWindow: the reducer is called only for window
positions that fall on an element of the operand; measured on jaxlib 0.10.2):
- every output element starts from the init value, once, whatever the reducer is: with
  init 1 and add, a window of 3 elements gives 1 + their sum, and a window that lies wholly
  in the padding gives 1 -- not "pad with the init, then reduce", which adds the init
  again for every padded position;
- along each axis the base dilation `b` spreads the n elements b apart (dilated length
  (n - 1) * b + 1), the padding (lo, hi) of either sign is applied to that dilated base, and
  a window dilated by `w` reads every w-th position of a span of (size - 1) * w + 1;
  window position k of output o reads dilated position o * stride + k * w - lo, and that
  position is skipped when it is outside [0, (n - 1) * b] or not a multiple of b;
- a scalar operand (rank 0, no window) is the result itself: the init is not used (max
  from init 100 over 42 gives 42), while a window of one element of a rank-1 operand
  still starts from the init (42 + 1 = 43);
- the window's positions are combined one after another, nearly row-major (XLA CPU's
  order, interp.reduce_order.window_axis_order), so float sums agree bit for bit.

Contract: `reduce_window(xs, inits, geometry, combine)` -> the N results for N operands xs
(B, *dims) and inits (B,); `combine(accs, elements)` is the reducer on flat lanes
(values.LaneCombiner). Window positions that read an element of some output are visited
in that order, each as one combine on the box of outputs it reaches (along every
axis those outputs, and the elements they read, are arithmetic progressions: slices).
More than reduce_order.SEQUENTIAL_LIMIT such positions: each axis is reduced in turn by
doubling (windows of 1, 2, 4, ... positions, log2(size) combines of whole arrays with a
validity mask, so skipped positions stay skipped), which is XLA CPU's result for every
associative and commutative reducer -- XLA requires those -- up to float rounding.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from tilecc.hlo.interp.reduce_order import (SCAN_BASE_LENGTH, SEQUENTIAL_LIMIT,
                                           window_axis_order)
from tilecc.hlo.interp.values import Array, LaneCombiner


@dataclass(frozen=True, slots=True)
class WindowGeometry:
    """One entry per operand axis: window size, stride, padding (lo, hi), base dilation
    (lhs_dilate), window dilation (rhs_dilate)."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    pads: tuple[tuple[int, int], ...]
    base: tuple[int, ...]
    dilation: tuple[int, ...]

    def out_dims(self, dims: tuple[int, ...]) -> tuple[int, ...]:
        """XLA's shape inference for reduce-window."""
        out = []
        for n, size, stride, (lo, hi), b, w in zip(dims, self.sizes, self.strides, self.pads,
                                                   self.base, self.dilation):
            padded = ((n - 1) * b + 1 if n else 0) + lo + hi
            span = (size - 1) * w + 1
            out.append((padded - span) // stride + 1 if padded >= span else 0)
        return tuple(out)


def reduce_window(xs: list[Array], inits: list[Array], geometry: WindowGeometry,
                  combine: LaneCombiner) -> list[Array]:
    """See the module contract."""
    lanes, dims = xs[0].shape[0], xs[0].shape[1:]
    out = geometry.out_dims(dims)
    accs = [np.array(np.broadcast_to(init.reshape((lanes,) + (1,) * len(out)), (lanes,) + out))
            for init in inits]
    if not dims:  # a scalar's window is empty: XLA CPU gives the operand, init unused
        return [np.array(x) for x in xs]
    if 0 in out or 0 in dims:
        return accs  # no window reads an element: every output is the init
    if (scan := _scan_axis(geometry, dims)) is not None:
        return _rewritten_scan(xs, inits, geometry, scan, combine)
    reads = [_axis_reads(n, o, size, stride, lo, b, w) for n, o, size, stride, (lo, _), b, w
             in zip(dims, out, geometry.sizes, geometry.strides, geometry.pads,
                    geometry.base, geometry.dilation)]
    positions = int(np.prod([len(r) for r in reads], dtype=np.int64))
    if positions > SEQUENTIAL_LIMIT:
        return _doubling(xs, accs, geometry, out, combine)
    order = window_axis_order(geometry.sizes, geometry.pads)
    for ordered in itertools.product(*(reads[axis] for axis in order)):
        picks = list(ordered)
        for axis, pick in zip(order, ordered):
            picks[axis] = pick
        box = (slice(None),) + tuple(p[0] for p in picks)
        source = (slice(None),) + tuple(p[1] for p in picks)
        shape = accs[0][box].shape
        stepped = combine([acc[box].reshape(-1) for acc in accs],
                          [x[source].reshape(-1) for x in xs])
        for acc, value in zip(accs, stepped):
            acc[box] = value.reshape(shape)
    return accs


def _trivial(geometry: WindowGeometry, axis: int) -> bool:
    return (geometry.sizes[axis], geometry.strides[axis], geometry.pads[axis],
            geometry.base[axis], geometry.dilation[axis]) == (1, 1, (0, 0), 1, 1)


def _scan_axis(geometry: WindowGeometry, dims: tuple[int, ...]) -> int | None:
    """The axis of a scan that XLA CPU's ReduceWindowRewriter rewrites (see
    reduce_order), or None."""
    axes = [axis for axis in range(len(dims)) if not _trivial(geometry, axis)]
    if len(axes) != 1:
        return None
    axis = axes[0]
    n, (lo, hi) = dims[axis], geometry.pads[axis]
    if n <= SCAN_BASE_LENGTH or geometry.sizes[axis] != n or geometry.strides[axis] != 1 or \
            geometry.base[axis] != 1 or geometry.dilation[axis] != 1:
        return None
    return axis if (lo in (n - 1, n) and hi == 0) or (hi in (n - 1, n) and lo == 0) else None


def _rewritten_scan(xs: list[Array], inits: list[Array], geometry: WindowGeometry,
                    axis: int, combine: LaneCombiner) -> list[Array]:
    """The scan along `axis` as XLA's ReduceWindowRewriter computes it (reduce_order)."""
    lanes, n = xs[0].shape[0], xs[0].shape[1 + axis]
    lo, hi = geometry.pads[axis]
    forward, exclusive = hi == 0, max(lo, hi) == n
    base = SCAN_BASE_LENGTH
    columns = -(-n // base)
    rows = []
    for x, init in zip(xs, inits):  # the axis last, padded at its end with the init
        last = np.moveaxis(x, 1 + axis, -1)
        tail = np.broadcast_to(init.reshape((lanes,) + (1,) * (last.ndim - 1)),
                               last.shape[:-1] + (columns * base - n,))
        rows.append(np.concatenate([last, tail], axis=-1)
                    .reshape(last.shape[:-1] + (columns, base)))
    rank = rows[0].ndim - 1

    def scan_window(size: int, pad: int, along: int) -> WindowGeometry:
        pads = [(0, 0)] * along + [(pad, 0) if forward else (0, pad)]
        return WindowGeometry((1,) * (along) + (size,), (1,) * (along + 1), tuple(pads),
                              (1,) * (along + 1), (1,) * (along + 1))
    outer = reduce_window(rows, inits, scan_window(base, base - 1, rank - 1), combine)
    totals = [o[..., base - 1] if forward else o[..., 0] for o in outer]
    inner = reduce_window(totals, inits, scan_window(columns, columns, rank - 2), combine)
    before = [i[..., :columns] if forward else i[..., 1:] for i in inner]
    shape = outer[0].shape
    stepped = combine([o.reshape(-1) for o in outer],
                      [np.broadcast_to(b[..., None], shape).reshape(-1) for b in before])
    results = []
    for value, init in zip(stepped, inits):
        scan = value.reshape(shape[:-2] + (columns * base,))[..., :n]
        if exclusive:
            front = np.broadcast_to(init.reshape((lanes,) + (1,) * (scan.ndim - 1)),
                                    scan.shape[:-1] + (1,))
            scan = np.concatenate([front, scan] if forward else [scan, front], axis=-1)
        results.append(np.moveaxis(scan, -1, 1 + axis))
    return results


def _axis_reads(n: int, out: int, size: int, stride: int, lo: int, b: int, w: int
                ) -> list[tuple[slice, slice]]:
    """Per window position k (in order) that reads an element for some output along this
    axis: (the outputs that read one, the elements they read), both as slices; positions
    that read none are left out."""
    o = np.arange(out)
    reads = []
    for k in range(size):
        position = o * stride + k * w - lo
        hit = np.flatnonzero((position >= 0) & (position <= (n - 1) * b) & (position % b == 0))
        if hit.size == 0:
            continue
        first, last = int(hit[0]), int(hit[-1])
        step = int(hit[1] - hit[0]) if hit.size > 1 else 1
        src_first, src_last = int(position[first]) // b, int(position[last]) // b
        src_step = step * stride // b if hit.size > 1 else 1
        reads.append((slice(first, last + 1, step), slice(src_first, src_last + 1, src_step)))
    return reads


def _doubling(xs: list[Array], accs: list[Array], geometry: WindowGeometry,
              out: tuple[int, ...], combine: LaneCombiner) -> list[Array]:
    """The long-window path of the module contract: the dilated, padded operands with a
    validity mask, reduced axis after axis, then combined with the init where valid."""
    lanes, dims = xs[0].shape[0], xs[0].shape[1:]
    index, valid_axes = [np.arange(lanes)], []
    for n, (lo, hi), b in zip(dims, geometry.pads, geometry.base):
        position = np.arange((n - 1) * b + 1 + lo + hi) - lo
        valid_axes.append((position >= 0) & (position <= (n - 1) * b) & (position % b == 0))
        index.append(np.clip(position // b, 0, n - 1))
    grid = np.ix_(*index)
    values = [x[grid] for x in xs]
    valid = np.ones((1,) * len(dims), bool)
    for axis, along in enumerate(valid_axes):
        valid = valid & along.reshape((1,) * axis + (-1,) + (1,) * (len(dims) - axis - 1))
    valid = np.broadcast_to(valid[None], values[0].shape)
    for axis, (size, stride, w, count) in enumerate(zip(geometry.sizes, geometry.strides,
                                                        geometry.dilation, out)):
        values, valid = _reduce_axis(values, valid, 1 + axis, size, stride, w, count, combine)
    stepped = combine([a.reshape(-1) for a in accs], [v.reshape(-1) for v in values])
    keep = valid.reshape(-1)
    return [np.where(keep, s, a.reshape(-1)).reshape(a.shape) for s, a in zip(stepped, accs)]


def _reduce_axis(values: list[Array], valid: Array, axis: int, size: int, stride: int,
                 w: int, count: int, combine: LaneCombiner) -> tuple[list[Array], Array]:
    """Along `axis`: result[o] = the valid ones of values[o * stride + k * w], k < size,
    combined in k order (`count` outputs). Windows of m = 1, 2, 4, ... positions double
    until every bit of `size` is taken, lowest first, so the result keeps k order."""
    def shifted(arrays: list[Array], mask: Array, start: int, length: int
                ) -> tuple[list[Array], Array]:
        cut = (slice(None),) * axis + (slice(start, start + length),)
        return [a[cut] for a in arrays], mask[cut]

    power, power_valid = values, valid
    acc: tuple[list[Array], Array] | None = None
    offset, m = 0, 1
    while m <= size:
        if size & m:
            length = power_valid.shape[axis] - offset * w
            part = shifted(power, power_valid, offset * w, length)
            if acc is not None:
                length = min(length, acc[1].shape[axis])
                acc = _pair(shifted(*acc, 0, length), shifted(*part, 0, length), combine)
            else:
                acc = part
            offset += m
        if 2 * m <= size:
            length = power_valid.shape[axis] - m * w
            power, power_valid = _pair(shifted(power, power_valid, 0, length),
                                       shifted(power, power_valid, m * w, length), combine)
        m *= 2
    assert acc is not None
    take = (slice(None),) * axis + (slice(0, (count - 1) * stride + 1, stride),)
    return [a[take] for a in acc[0]], acc[1][take]


def _pair(left: tuple[list[Array], Array], right: tuple[list[Array], Array],
          combine: LaneCombiner) -> tuple[list[Array], Array]:
    """left then right where both are valid, the valid one where one is."""
    (a, a_valid), (b, b_valid) = left, right
    shape = a_valid.shape
    stepped = [s.reshape(shape) for s in combine([x.reshape(-1) for x in a],
                                                 [y.reshape(-1) for y in b])]
    both = a_valid & b_valid
    if both.all():
        return stepped, both
    return ([np.where(both, s, np.where(a_valid, x, y)) for s, x, y in zip(stepped, a, b)],
            a_valid | b_valid)
