"""2-d max pooling with stride 1 as a benchmark-suite kernel writes it: windows of k rows
gathered by one load with the index `i_h + i_kh` (overlapping rows), a 4-d mgrid view of the
tile with `i_w + i_kw` for the columns, nl.max over axes [1, 3], masked partial row tiles.
SOURCE: ucb-bar/autocomp sols/trn-advanced/2_maxpool_ref.py"""
import math

import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def maxpool_stride1(in_tensor, pool_size):
    k = pool_size
    h_in, w_in = in_tensor.shape
    h_out, w_out = h_in - (k - 1), w_in - (k - 1)
    out_tensor = nl.ndarray((h_out, w_out), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(math.ceil(h_in / nl.tile_size.pmax)):
        i_h, i_kh, i_w = nl.mgrid[0:nl.tile_size.pmax, 0:k, 0:w_in]
        i_h = t * nl.tile_size.pmax + i_h
        in_tile = nl.load(in_tensor[i_h + i_kh, i_w], mask=(i_h < h_out))
        i_h, i_kh, i_w, i_kw = nl.mgrid[0:nl.tile_size.pmax, 0:k, 0:w_out, 0:k]
        out_tile = nl.max(in_tile[i_h, i_kh, i_w + i_kw], axis=[1, 3],
                          mask=(t * nl.tile_size.pmax + i_h < h_in))
        i_ho, i_wo = nl.mgrid[0:nl.tile_size.pmax, 0:w_out]
        i_ho = t * nl.tile_size.pmax + i_ho
        nl.store(out_tensor[i_ho, i_wo], value=out_tile, mask=(i_ho < h_out))
    return out_tensor


KERNEL = maxpool_stride1


def make_inputs(rng):
    return (rng.normal(size=(150, 20)).astype(np.float32), 3)


def reference(x, k):
    h, w = x.shape
    windows = np.lib.stride_tricks.sliding_window_view(x, (k, k))
    return windows.max(axis=(2, 3)).astype(np.float32)
