"""3 x 3 max pool, stride 1, over a [96, 34] map with a one-element -inf padded border on the
free axis: each output column j is max(x[:, j-1], x[:, j], x[:, j+1]) over the columns that
exist, as a padded MaxPool2D computes its edges.

Covers: lower-bound masks (`i_f >= 1`), upper-bound masks (`i_f < w - 1`) and their two-sided
combination on accesses that reach outside the tile (`x[i_p, i_f - 1]`), masked nl.maximum
results that are full-shape tiles written only inside the mask, then combined by masked
copies (`tile[...] = ...` of a masked result copies the box it holds)."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def padded_row_pool(x_hbm):
    rows, width = x_hbm.shape
    out = nl.ndarray(x_hbm.shape, dtype=x_hbm.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:rows, 0:width]
    x = nl.load(x_hbm[i_p, i_f])
    left = nl.maximum(x[i_p, i_f], x[i_p, i_f - 1], mask=(i_f >= 1))
    pooled = nl.ndarray((rows, width), dtype=x.dtype, buffer=nl.sbuf)
    pooled[i_p, i_f] = nl.copy(x, mask=(i_f < 1))
    pooled[i_p, i_f] = nl.copy(left, mask=(i_f >= 1))
    both = nl.maximum(pooled[i_p, i_f], x[i_p, i_f + 1], mask=(i_f < width - 1))
    nl.store(out[i_p, i_f], both, mask=(i_f < width - 1))
    nl.store(out[i_p, i_f], pooled, mask=(i_f >= width - 1) & (i_f < width))
    return out


KERNEL = padded_row_pool


def make_inputs(rng):
    x = rng.normal(size=(96, 34)).astype(np.float32)
    x[3, 0], x[5, 33], x[7, 10] = -np.inf, np.inf, -5.0
    return (x,)


def reference(x):
    padded = np.pad(x, ((0, 0), (1, 1)), constant_values=-np.inf)
    return np.maximum(np.maximum(padded[:, :-2], padded[:, 1:-1]), padded[:, 2:])
