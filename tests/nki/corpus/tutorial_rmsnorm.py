"""RMSNorm with the tile-level API: the weight row loaded once through reshape + mgrid and
broadcast to 128 partitions, rows in 128-row tiles with a partial last tile.
SOURCE: aws-neuron/nki-samples src/nki_samples/tutorials/rmsnorm/rmsnorm_nki_kernels.py"""
import math

import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def rmsnorm(a_tensor, g_tensor):
    out = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    n_rows, width = a_tensor.shape
    assert width == g_tensor.shape[0]
    ix, iw, iy = nl.mgrid[0:128, 0:1, 0:width]
    g_row = nl.load(g_tensor.reshape((1, width))[iw, iy])
    for t in nl.affine_range(math.ceil(n_rows / 128)):
        live = t * 128 + ix < n_rows
        x = nl.load(a_tensor[t * 128 + ix, iy], mask=live)
        sq_sum = nl.sum(nl.square(x), axis=[1])
        inv_rms = nl.rsqrt(sq_sum / width)
        y = nl.multiply(x, inv_rms)
        g_all = g_row.broadcast_to((128, width))
        y[...] = nl.multiply(y, g_all, mask=live)
        nl.store(out[t * 128 + ix, iy], value=y, mask=live)
    return out


KERNEL = rmsnorm
TOLERANCE = {"rtol": 2e-5, "atol": 1e-5}


def make_inputs(rng):
    return (rng.normal(size=(300, 64)).astype(np.float32), rng.normal(size=(64,)).astype(np.float32))


def reference(a, g):
    a64 = a.astype(np.float64)
    return (a64 / np.sqrt(np.mean(a64 * a64, axis=1, keepdims=True)) * g).astype(np.float32)
