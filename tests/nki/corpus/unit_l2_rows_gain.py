"""Rows scaled towards unit L2 norm with a softening constant, y = x * rsqrt(sum(x^2) + 1)
* gain, for a [260, 40] tensor in 128-row tiles (the last one partial).

Covers: a three-index nl.mgrid[0:128, 0:1, 0:W] with the unit axis in the middle, a 1-d gain
vector viewed with .reshape((1, W)) and loaded once, nl.sum(nl.square(x), axis=[2]) (the
loaded tile is [128, 1, W] as numpy indexing gives it, so the width is axis 2), tile +
scalar, nl.rsqrt, tile-returning nl.multiply by a [P, 1] column, `y[...] = nl.multiply(...,
mask=)` into an existing tile, broadcast_to inside the loop, masked load / store."""
import math

import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def unit_l2_rows(vectors, gain):
    out = nl.ndarray(vectors.shape, dtype=vectors.dtype, buffer=nl.shared_hbm)
    n_rows, width = vectors.shape
    assert gain.shape[0] == width
    ip, iu, iw = nl.mgrid[0:128, 0:1, 0:width]
    gain_row = nl.load(gain.reshape((1, width))[iu, iw])
    for blk in nl.affine_range(math.ceil(n_rows / 128)):
        keep = blk * 128 + ip < n_rows
        x = nl.load(vectors[blk * 128 + ip, iw], mask=keep)
        inv_norm = nl.rsqrt(nl.sum(nl.square(x), axis=[2]) + 1.0)
        y = nl.multiply(x, inv_norm)
        y[...] = nl.multiply(y, gain_row.broadcast_to((128, width)), mask=keep)
        nl.store(out[blk * 128 + ip, iw], value=y, mask=keep)
    return out


KERNEL = unit_l2_rows
TOLERANCE = {"rtol": 2e-5, "atol": 1e-6}


def make_inputs(rng):
    vectors = rng.normal(size=(260, 40)).astype(np.float32)
    vectors[3] = 0.0
    return (vectors, rng.normal(size=(40,)).astype(np.float32))


def reference(vectors, gain):
    x = vectors.astype(np.float64)
    return (x / np.sqrt((x * x).sum(axis=1, keepdims=True) + 1.0) * gain).astype(np.float32)
