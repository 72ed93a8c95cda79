"""Which part of its tiles a masked NKI 1.x instruction computes, and the tile it returns.

Contract (NKI semantics, klr-bir.md and the NKI docs on `mask=`): an instruction with a mask
reads and writes only the mask's box, an interval [low, high) per dim (tilecc/nki/indexing.py
turns the mask into a box; `NkiTensor.dims_box` puts it on a view's dims). A tile-returning
call returns a tile of the full shape of which only the box is written (`result_tile`);
the rest stays unwritten, so it holds undefined data in the simulator (reported if it reaches
HBM, tilecc/definedness.py) unless something else wrote it. That box is remembered (`Allocation.written`): an unmasked
instruction on such a tile computes on the box the operands hold (`call_box`), as NKI
computes on whole tiles and the values outside are never meant to be read; `tile[...] =`
of such a tile copies its box (tensor.py). A store or an index access is not cut this way,
so reading past the box reads undefined data. An instruction that later writes the
whole tile clears the box (Trace.emit).

Invariants: a box has one [low, high) per dim of the operand it is expressed on, with
0 <= low < high <= size; `None` means the whole tile. Other operands are cut on the dims
whose size equals the operand's (`cut`): a [P, 1] column keeps its one column. On the
partition dim the compute engines' start rule (tracer.check_start_partition) applies to the
cut accesses; DMA copies take any start.
"""

from __future__ import annotations

from typing import overload

from tilecc.nki.indexing import mask_box
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import active_trace

DimBox = tuple[tuple[int, int], ...]


def call_box(what: str, mask: object, data: NkiTensor, *others: object) -> DimBox | None:
    """The box, on `data`'s dims, that an instruction on `data` (and `others`) computes: the
    mask's; without one, the part operands made by masked instructions hold, intersected;
    None for the whole tile (also when that part is empty: the instruction then reads
    elements nothing wrote, which the simulator reports)."""
    if box := mask_box(mask, what):
        spans = data.dims_box(box, what)
    else:
        spans = tuple((0, num) for num in data.shape)
        for value in (data, *others):
            if not isinstance(value, NkiTensor) or (held := written_box(value)) is None:
                continue
            spans = tuple((max(low, held[i][0]), min(high, held[i][1]))
                          if i < value.ndim and value.shape[i] == data.shape[i] else (low, high)
                          for i, (low, high) in enumerate(spans))
        if any(low >= high for low, high in spans):
            return None   # it reads only outside what they wrote: undefined data, as in NKI
    if all(span == (0, num) for span, num in zip(spans, data.shape)):
        return None
    return spans


@overload
def cut(value: NkiTensor, box: DimBox | None, shape: tuple[int, ...]) -> NkiTensor: ...
@overload
def cut(value: object, box: DimBox | None, shape: tuple[int, ...]) -> object: ...


def cut(value: object, box: DimBox | None, shape: tuple[int, ...]) -> object:
    """`value` restricted to `box` (given on an operand of `shape`) on the dims where its size
    is that operand's; numbers pass through."""
    if not isinstance(value, NkiTensor):
        return value
    if box is None:
        return value.usable()
    return value.restricted(tuple(box[i] if i < len(shape) and num == shape[i] else (0, num)
                                  for i, num in enumerate(value.shape)))


def result_tile(shape: tuple[int, ...], dtype: str, name: str,
                box: DimBox | None) -> tuple[NkiTensor, NkiTensor]:
    """A new full-shape SBUF tile and the part of it an instruction restricted to `box` writes."""
    out = active_trace().allocate(shape, dtype, "sbuf", name)
    if box is None or all(span == (0, num) for span, num in zip(box, shape)):
        return out, out
    out.alloc.written = box
    return out, out.restricted(box)


def reduced_box(box: DimBox | None, axes: list[int], keepdims: bool) -> DimBox | None:
    """The box of a reduction's result over `axes`: the kept dims' spans, a reduced dim kept
    as (0, 1), and a [P, 1] column when every free dim is reduced (tile_ops.reduced_shape)."""
    if box is None:
        return None
    if keepdims:
        return tuple((0, 1) if i in axes else span for i, span in enumerate(box))
    kept = tuple(span for i, span in enumerate(box) if i not in axes)
    return kept if len(kept) > 1 else (kept[0], (0, 1))


def written_box(view: NkiTensor) -> DimBox | None:
    """The part of `view` that the masked instruction which made its tile wrote
    (Allocation.written), as [low, high) per dim of the view; None when the whole tile holds
    values or the view walks the tile in a way that is not a sub-box (a step-0 broadcast
    keeps its dim whole)."""
    alloc = view.alloc
    if alloc.written is None or not alloc.on_chip:
        return None
    full = alloc.full_view().dims
    start, rest = [0] * len(full), view.offset
    for d in sorted((d for d, dim in enumerate(full) if not dim.is_par), key=lambda d: -full[d].step):
        start[d], rest = divmod(rest, full[d].step)
    start[alloc.par_axis] = view.par_start
    walked: set[int] = set()
    spans = []
    for dim in view.dims:
        if dim.step == 0:
            spans.append((0, dim.num))
            continue
        # the tile dim this view dim walks: the widest stride that divides its step
        walks = next((d for d in sorted(range(len(full)), key=lambda d: -full[d].step)
                      if full[d].is_par == dim.is_par and dim.step % full[d].step == 0
                      and start[d] + dim.step // full[d].step * (dim.num - 1) < full[d].num), None)
        if walks is None or walks in walked:
            return None
        walked.add(walks)
        k, (low, high) = dim.step // full[walks].step, alloc.written[walks]
        first = max(0, -(-(low - start[walks]) // k))
        stop = min(dim.num, (high - 1 - start[walks]) // k + 1)
        spans.append((first, max(first, stop)))
    if any(not low <= start[d] < high for d, (low, high) in enumerate(alloc.written)
           if d not in walked):
        return None   # a fixed index outside the box: nothing of it was written there
    return tuple(spans)
