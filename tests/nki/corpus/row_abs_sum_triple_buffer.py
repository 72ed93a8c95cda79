"""Per-row L1 norm (sum of |x|) of a [384, 40] tensor with direct SBUF allocation: input tiles
rotate through a 3-slot buffer placed with ncc.sbuf.mod_alloc, the row sums come from
nisa.activation_reduce(op=nl.abs, reduce_op=np.add) into a fixed [P, 1] tile, and every
partial result is DMA'd straight to HBM.

Covers: @nki.jit over @ncc.skip_middle_end_transformations, ncc.sbuf.mod_alloc(base_addr=,
num_free_tiles=(3,)) and mod_alloc(base_addr=) for single tiles, a [3, par_dim(P), F] buffer
indexed by `i % 3`, nl.static_range, nisa.dma_copy into a buffer slot and from a [P, 1] tile
to an HBM row slice, `act[...] = nisa.activation_reduce(..., reduce_res=sums[...])`."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.compiler as ncc
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki.language import par_dim


@nki.jit
@ncc.skip_middle_end_transformations
def row_abs_sum(x):
    rows, width = x.shape
    pmax = nl.tile_size.pmax
    norms = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    ring = nl.ndarray((3, par_dim(pmax), width), dtype=x.dtype,
                      buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(3,)))
    magnitude = nl.ndarray((par_dim(pmax), width), dtype=nl.float32,
                           buffer=ncc.sbuf.mod_alloc(base_addr=3 * width * 4))
    sums = nl.ndarray((par_dim(pmax), 1), dtype=nl.float32,
                      buffer=ncc.sbuf.mod_alloc(base_addr=4 * width * 4))
    for i in nl.static_range(rows // pmax):
        slot = i % 3
        nisa.dma_copy(dst=ring[slot], src=x[i * pmax:(i + 1) * pmax, :])
        magnitude[...] = nisa.activation_reduce(op=nl.abs, data=ring[slot], reduce_op=np.add,
                                                reduce_res=sums[...])
        nisa.dma_copy(dst=norms[i * pmax:(i + 1) * pmax, :], src=sums)
    return norms


KERNEL = row_abs_sum
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def make_inputs(rng):
    return (rng.normal(size=(384, 40)).astype(np.float32),)


def reference(x):
    return np.abs(x.astype(np.float64)).sum(axis=1, keepdims=True).astype(np.float32)
