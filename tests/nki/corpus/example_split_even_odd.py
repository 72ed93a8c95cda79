"""Split columns into even and odd outputs with strided nl.arange indices on an SBUF tile
(copies on chip), two returned tensors.
SOURCE: aws-neuron/aws-neuron-sdk nki/examples/index-case-1.py"""
import math

import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def split_columns(in_tensor):
    rows, cols = in_tensor.shape
    n_even, n_odd = cols - cols // 2, cols // 2
    even = nl.ndarray((rows, n_even), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    odd = nl.ndarray((rows, n_odd), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    assert rows <= nl.tile_size.pmax and n_even == math.ceil(cols / 2)
    i_p = nl.arange(rows)[:, None]
    i_f = nl.arange(cols)[None, :]
    i_even = nl.arange(n_even)[None, :]
    i_odd = nl.arange(n_odd)[None, :]
    tile = nl.load(in_tensor[i_p, i_f])
    even_tile = tile[i_p, 2 * i_even]
    odd_tile = tile[i_p, 2 * i_odd + 1]
    nl.store(even[i_p, i_even], value=even_tile)
    nl.store(odd[i_p, i_odd], value=odd_tile)
    return even, odd


KERNEL = split_columns


def make_inputs(rng):
    return (np.arange(4 * 5, dtype=np.float32).reshape(4, 5) * -1.5,)


def reference(x):
    return x[:, 0::2].copy(), x[:, 1::2].copy()
