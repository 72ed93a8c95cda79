"""nl.load / nl.store and nisa.dma_copy docstring examples: a whole-tensor load and store, a
batched [4, 128, 512] copy through an nl.zeros tile assigned with mgrid indices, and an
HBM-to-HBM dma_copy of a [256, 1] tensor.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_nl_load_store.py and
general/nki/test/test_nki_isa_dma_copy.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def load_store_dma(in_tensor, batched, column):
    out_tensor = nl.ndarray(in_tensor.shape, in_tensor.dtype, buffer=nl.shared_hbm)
    data_tile = nl.load(in_tensor)
    nl.store(out_tensor, data_tile)
    out_batched = nl.ndarray(batched.shape, batched.dtype, buffer=nl.shared_hbm)
    for i_b in nl.affine_range(4):
        tile = nl.zeros((128, 512), dtype=batched.dtype)
        i_p, i_f = nl.mgrid[0:128, 0:512]
        tile[i_p, i_f] = nl.load(batched[i_b, i_p, i_f])
        nl.store(out_batched[i_b, i_p, i_f], value=tile[i_p, i_f])
    out_column = nl.ndarray(column.shape, dtype=column.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(src=column, dst=out_column)
    return out_tensor, out_batched, out_column


KERNEL = load_store_dma


def make_inputs(rng):
    return (rng.random((128, 512)).astype(np.float32), rng.random((4, 128, 512)).astype(np.float32),
            rng.random((256, 1)).astype(np.float32))


def reference(a, b, c):
    return a.copy(), b.copy(), c.copy()
