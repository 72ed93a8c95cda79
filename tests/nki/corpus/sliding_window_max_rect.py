"""Stride-1 maximum over [3, 2] (rows x columns) windows of a [140, 30] tensor, in 128-row tiles:
one load gathers the 3 overlapping input rows of every output row with the index `i_h + i_kh`,
a 4-d mgrid view adds `i_w + i_kw` for the columns, nl.max reduces the two window axes; the
last tile is partial and masked.

Covers: three- and four-index nl.mgrid, loop-shifted mgrid indices, an HBM load indexed by a
sum of two mgrid axes (overlapping reads) with mask=, a 4-d view of a 3-d tile through
`t[i_h, i_kh, i_w + i_kw]`, nl.max(axis=[1, 3], mask=), masked store, math.ceil, two different
window extents."""
import math

import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def window_max(field, kh, kw):
    height, width = field.shape
    out_h, out_w = height - kh + 1, width - kw + 1
    peaks = nl.ndarray((out_h, out_w), dtype=field.dtype, buffer=nl.shared_hbm)
    pmax = nl.tile_size.pmax
    for blk in nl.affine_range(math.ceil(out_h / pmax)):
        r, dr, c = nl.mgrid[0:pmax, 0:kh, 0:width]
        r = blk * pmax + r
        rows = nl.load(field[r + dr, c], mask=(r < out_h))
        r, dr, c, dc = nl.mgrid[0:pmax, 0:kh, 0:out_w, 0:kw]
        top = nl.max(rows[r, dr, c + dc], axis=[1, 3], mask=(blk * pmax + r < out_h))
        orow, ocol = nl.mgrid[0:pmax, 0:out_w]
        orow = blk * pmax + orow
        nl.store(peaks[orow, ocol], value=top, mask=(orow < out_h))
    return peaks


KERNEL = window_max


def make_inputs(rng):
    return (rng.normal(size=(140, 30)).astype(np.float32), 3, 2)


def reference(field, kh, kw):
    return np.lib.stride_tricks.sliding_window_view(field, (kh, kw)).max(axis=(2, 3))
