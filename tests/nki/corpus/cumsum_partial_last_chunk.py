"""Row-wise cumulative sum of a [128, 20] matrix in chunks of 8 columns: the last chunk holds
4, so the load, the scan and the store carry `mask=(c * 8 + i_f < cols)`; the scan's result is
a full [128, 8] tile written in its first 4 columns there, and the carry into the next chunk
(its column 7) is only read while a next chunk exists.

Covers: a masked nisa.tensor_tensor_scan (1.x form) with a [P, 1] tile as `initial`, indexing
a masked result past its mask at trace time (`s[0:128, 7:8]`), a compile-time mask that skips
the carry copy after the last chunk, masked loads / stores of a partial free-axis chunk."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def chunked_cumsum(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:8]
    ones = nl.ones((128, 8), dtype=nl.float32)
    carry = nl.zeros((128, 1), dtype=nl.float32)
    n_chunks = (cols + 7) // 8
    for c in nl.sequential_range(n_chunks):
        keep = c * 8 + i_f < cols
        chunk = nl.load(x[i_p, c * 8 + i_f], mask=keep)
        s = nisa.tensor_tensor_scan(ones, chunk, initial=carry, op0=np.multiply, op1=np.add,
                                    mask=keep)
        carry[...] = nisa.tensor_copy(s[0:128, 7:8], mask=(c + 1 < n_chunks))
        nl.store(out[i_p, c * 8 + i_f], s, mask=keep)
    return out


KERNEL = chunked_cumsum
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def make_inputs(rng):
    x = rng.normal(size=(128, 20)).astype(np.float32)
    x[4, 17] = -1e3
    return (x,)


def reference(x):
    return np.cumsum(x.astype(np.float64), axis=1).astype(np.float32)
