"""A kernel with direct allocation as published user kernels write it: tiles placed with
`ncc.sbuf.mod_alloc(base_addr=...)`, a [2, par_dim, F] double buffer filled in a static loop,
@ncc.skip_middle_end_transformations under @nki.jit; the math is a row-scaled square sum.
SOURCE: pattern of GitHub user kernels found with the code search ("nisa.activation_reduce(",
"ncc.sbuf.mod_alloc")"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.compiler as ncc
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki.language import par_dim


@nki.jit
@ncc.skip_middle_end_transformations
def row_energy(x):
    rows, dim = x.shape
    pmax = nl.tile_size.pmax
    out = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    in_bufs = nl.ndarray((2, par_dim(pmax), dim), dtype=x.dtype,
                         buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
    square_sum = nl.ndarray((par_dim(pmax), 1), dtype=nl.float32,
                            buffer=ncc.sbuf.mod_alloc(base_addr=2 * dim * 4))
    act = nl.ndarray((par_dim(pmax), dim), dtype=nl.float32,
                     buffer=ncc.sbuf.mod_alloc(base_addr=2 * dim * 4 + 4))
    for i in nl.static_range(rows // pmax):
        slot = i % 2
        nisa.dma_copy(dst=in_bufs[slot], src=x[i * pmax:(i + 1) * pmax, :])
        act[...] = nisa.activation_reduce(op=nl.square, data=in_bufs[slot], reduce_op=np.add,
                                          reduce_res=square_sum[...])
        nisa.dma_copy(dst=out[i * pmax:(i + 1) * pmax, :], src=square_sum)
    return out


KERNEL = row_energy
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def make_inputs(rng):
    return (rng.normal(size=(384, 48)).astype(np.float32),)


def reference(x):
    return (x.astype(np.float64) ** 2).sum(axis=1, keepdims=True).astype(np.float32)
