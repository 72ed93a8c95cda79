"""a * (1 + b) for two 1-d vectors of 96 elements, held as [96, 1] SBUF columns: the product
and the sum are each a tile-returning nisa.tensor_scalar with the other column as the
per-partition operand.

Covers: 1-d HBM tensors copied into [N, 1] SBUF columns and back with nisa.dma_copy(src=, dst=)
(keyword order src first), nl.ndarray(shape=, dtype=, buffer=) with buffer=nl.hbm for the
output, positional nisa.tensor_scalar(tile, nl.multiply, column) and (tile, nl.add, column),
a tile-returning result DMA'd straight to HBM."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def scaled_add(a_vec, b_vec):
    out = nl.ndarray(shape=a_vec.shape, dtype=a_vec.dtype, buffer=nl.hbm)
    a_col = nl.ndarray(shape=(a_vec.shape[0], 1), dtype=a_vec.dtype, buffer=nl.sbuf)
    b_col = nl.ndarray(shape=(b_vec.shape[0], 1), dtype=b_vec.dtype, buffer=nl.sbuf)
    nisa.dma_copy(src=a_vec, dst=a_col)
    nisa.dma_copy(src=b_vec, dst=b_col)
    product = nisa.tensor_scalar(a_col, nl.multiply, b_col)
    result = nisa.tensor_scalar(product, nl.add, a_col)
    nisa.dma_copy(src=result, dst=out)
    return out


KERNEL = scaled_add
TOLERANCE = {"rtol": 1e-6, "atol": 1e-6}


def make_inputs(rng):
    return (rng.normal(size=(96,)).astype(np.float32), rng.normal(size=(96,)).astype(np.float32))


def reference(a, b):
    return a * b + a
