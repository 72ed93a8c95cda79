"""A vector add as kernel authors write it in public repositories: 1-d HBM vectors copied
into [N, 1] SBUF columns with dma_copy, added with the tile-returning
`nisa.tensor_scalar(a, nl.add, b)` (b as the per-partition operand), copied back.
SOURCE: pattern of GitHub user kernels found with the code search ("= nisa.tensor_scalar(")"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def vector_add(a_vec, b_vec):
    out = nl.ndarray(shape=a_vec.shape, dtype=a_vec.dtype, buffer=nl.hbm)
    a_sbuf = nl.ndarray(shape=(a_vec.shape[0], 1), dtype=a_vec.dtype, buffer=nl.sbuf)
    b_sbuf = nl.ndarray(shape=(b_vec.shape[0], 1), dtype=b_vec.dtype, buffer=nl.sbuf)
    nisa.dma_copy(src=a_vec, dst=a_sbuf)
    nisa.dma_copy(src=b_vec, dst=b_sbuf)
    res = nisa.tensor_scalar(a_sbuf, nl.add, b_sbuf)
    nisa.dma_copy(src=res, dst=out)
    return out


KERNEL = vector_add


def make_inputs(rng):
    return (rng.normal(size=(128,)).astype(np.float32), rng.normal(size=(128,)).astype(np.float32))


def reference(a, b):
    return a + b
