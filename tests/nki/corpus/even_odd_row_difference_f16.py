"""Even rows minus odd rows of a [128, 16] float16 tensor (one difference overflows to -inf).

Covers: nl.load of an HBM slice with a partition step (`x[0:128:2, 0:16]`, one DMA per row,
as the klr tool traces it), tensor_tensor on float16 tiles."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def row_diff(x):
    out = nl.ndarray((64, 16), dtype=x.dtype, buffer=nl.shared_hbm)
    even = nl.load(x[0:128:2, 0:16])
    odd = nl.load(x[1:128:2, 0:16])
    nl.store(out, nisa.tensor_tensor(even, odd, op=np.subtract))
    return out


KERNEL = row_diff


def make_inputs(rng):
    x = rng.normal(size=(128, 16)).astype(np.float16)
    x[0, 0], x[1, 0] = 60000, -60000
    return (x,)


def reference(x):
    with np.errstate(over="ignore"):
        return (x[0::2].astype(np.float32) - x[1::2].astype(np.float32)).astype(np.float16)
