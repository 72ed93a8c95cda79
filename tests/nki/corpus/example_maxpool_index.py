"""2-d max pooling with 5-d nl.arange index expressions: in_tile[i0, P*i1+i2, P*i3+i4]
views each window along dims 2 and 4, and nl.max reduces those (non-trailing) axes.
SOURCE: aws-neuron/aws-neuron-sdk nki/examples/index-case-3.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def maxpool(in_tensor, pool_size):
    c_in, h_in, w_in = in_tensor.shape
    h_out, w_out = h_in // pool_size, w_in // pool_size
    out = nl.ndarray((c_in, h_out, w_out), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(c_in)[:, None, None]
    i_hin = nl.arange(h_in)[None, :, None]
    i_win = nl.arange(w_in)[None, None, :]
    i_hout = nl.arange(h_out)[None, :, None]
    i_wout = nl.arange(w_out)[None, None, :]
    k0 = nl.arange(c_in)[:, None, None, None, None]
    k1 = nl.arange(h_in // pool_size)[None, :, None, None, None]
    k2 = nl.arange(pool_size)[None, None, :, None, None]
    k3 = nl.arange(w_in // pool_size)[None, None, None, :, None]
    k4 = nl.arange(pool_size)[None, None, None, None, :]
    in_tile = nl.ndarray([c_in, h_in, w_in], dtype=in_tensor.dtype)
    in_tile[:, :, :] = nl.load(in_tensor[i_p, i_hin, i_win])
    pooled = nl.max(in_tile[k0, pool_size * k1 + k2, pool_size * k3 + k4], axis=[2, 4])
    nl.store(out[i_p, i_hout, i_wout], value=pooled)
    return out


KERNEL = maxpool


def make_inputs(rng):
    return (rng.normal(size=(3, 6, 9)).astype(np.float32), 3)


def reference(x, pool):
    c, h, w = x.shape
    return x.reshape(c, h // pool, pool, w // pool, pool).max(axis=(2, 4))
