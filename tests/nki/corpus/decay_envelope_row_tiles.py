"""Exponential decay envelope exp(-x / 3) over a [384, 200] tensor, one 128-partition tile per
step of an affine_range.

Covers: nl.affine_range over partition tiles, a partition index shifted by the loop variable
(`step * nl.tile_size.pmax + nl.arange(...)[:, None]`), a free index from nl.arange, nl.load /
nl.store(value=) through those index expressions, nl.exp of a tile-times-scalar product."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def decay_envelope(signal):
    rows, cols = signal.shape
    envelope = nl.ndarray((rows, cols), dtype=signal.dtype, buffer=nl.shared_hbm)
    cols_idx = nl.arange(cols)[None, :]
    for step in nl.affine_range(rows // nl.tile_size.pmax):
        rows_idx = step * nl.tile_size.pmax + nl.arange(nl.tile_size.pmax)[:, None]
        block = nl.load(signal[rows_idx, cols_idx])
        nl.store(envelope[rows_idx, cols_idx], value=nl.exp(nl.multiply(block, -1.0 / 3.0)))
    return envelope


KERNEL = decay_envelope
TOLERANCE = {"rtol": 1e-5, "atol": 0}


def make_inputs(rng):
    return (rng.uniform(-20.0, 60.0, size=(384, 200)).astype(np.float32),)


def reference(signal):
    return np.exp(signal.astype(np.float64) * (-1.0 / 3.0)).astype(np.float32)
