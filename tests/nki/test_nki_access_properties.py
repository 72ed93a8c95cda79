"""Property: any slice of an HBM tensor copied through an SBUF tile (at any allowed start
partition and any free offset, with any positive step) comes back as numpy's slice of the same array, on the
BIR simulator and on the KLR interpreter (hypothesis, derandomized)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@st.composite
def copies(draw):
    rows, cols = draw(st.integers(1, 300)), draw(st.integers(1, 40))
    p = draw(st.integers(1, min(rows, 128)))
    r0 = draw(st.integers(0, rows - p))
    c0 = draw(st.integers(0, cols - 1))
    c1 = draw(st.integers(c0 + 1, cols))
    step = draw(st.integers(1, 4))
    count = len(range(c0, c1, step))
    starts = [0] if p > 64 else [0, 64] if p > 32 else [0, 32, 64, 96]   # quadrant rule
    par_offset = draw(st.sampled_from(starts))
    free_offset = draw(st.integers(0, 8))
    use_grid = draw(st.booleans())
    return rows, cols, p, r0, (c0, c1, step), count, par_offset, free_offset, use_grid


@settings(max_examples=40, deadline=None, derandomize=True)
@given(copies())
def test_slice_round_trip(case):
    rows, cols, p, r0, (c0, c1, step), count, par_offset, free_offset, use_grid = case
    a = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) - 1000.0

    def kernel(src):
        tile = nl.ndarray((128, free_offset + count), dtype=nl.float32, buffer=nl.sbuf)
        if use_grid:
            ip, jf = nl.mgrid[0:p, 0:count]
            nisa.dma_copy(dst=tile[par_offset + ip, free_offset + jf], src=src[r0 + ip, c0 + step * jf])
        else:
            nisa.dma_copy(dst=tile[par_offset:par_offset + p, free_offset:free_offset + count],
                          src=src[r0:r0 + p, c0:c1:step])
        out = nl.ndarray((p, count), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=tile[par_offset:par_offset + p, free_offset:])
        return out

    want = a[r0:r0 + p, c0:c1:step]
    for backend in ("bir", "klr"):
        np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(a), want)
