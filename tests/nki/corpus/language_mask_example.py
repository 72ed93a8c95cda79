"""The mask= example of the NKI docs: square only the [64, 256] corner of a [128, 512] tile
(the mask cuts both the partition and the free axis) and store that corner.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_mask.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def mask_example(in_tensor):
    out_tensor = nl.ndarray([64, 256], dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    in_tile = nl.load(in_tensor[i_p, i_f])
    out_tile = nl.square(in_tile, mask=((i_p < 64) & (i_f < 256)))
    nl.store(out_tensor[i_p, i_f], out_tile[i_p, i_f], mask=((i_p < 64) & (i_f < 256)))
    return out_tensor


KERNEL = mask_example


def make_inputs(rng):
    return (rng.normal(size=(128, 512)).astype(np.float32),)


def reference(a):
    return np.square(a[:64, :256])
