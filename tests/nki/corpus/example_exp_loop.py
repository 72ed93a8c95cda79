"""Element-wise exp over a [256, 512] tensor: two partition tiles, the partition index
shifted by the loop variable.
SOURCE: aws-neuron/aws-neuron-sdk nki/examples/layout-loop.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def exp_kernel(in_tensor):
    out = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(512)[None, :]
    for k in nl.affine_range(2):
        i_p = k * nl.tile_size.pmax + nl.arange(nl.tile_size.pmax)[:, None]
        tile = nl.load(in_tensor[i_p, i_f])
        nl.store(out[i_p, i_f], value=nl.exp(tile))
    return out


KERNEL = exp_kernel
TOLERANCE = {"rtol": 1e-5, "atol": 0}


def make_inputs(rng):
    return (rng.normal(0, 4, size=(256, 512)).astype(np.float32),)


def reference(x):
    return np.exp(x.astype(np.float64)).astype(np.float32)
