"""a + b over [300, 40] split into 128-row blocks, one per program of a 3-program launch grid:
the last block holds 44 rows, so every access carries `mask=(i_p + base < n)`.

Covers: an SPMD block offset inside the mask (`i_p + base < n` with base = program_id * 128),
masked nl.load / nl.add / nl.store on the partial last block, a masked load whose full grid
reaches past the end of the HBM tensor (the mask brings it back inside)."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def block_add(a, b):
    n, width = a.shape
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    base = nl.program_id(0) * 128
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(width)[None, :]
    keep = i_p + base < n
    x = nl.load(a[i_p + base, i_f], mask=keep)
    y = nl.load(b[i_p + base, i_f], mask=keep)
    nl.store(out[i_p + base, i_f], nl.add(x, y, mask=keep), mask=keep)
    return out


KERNEL = block_add[3]


def make_inputs(rng):
    a = rng.normal(size=(300, 40)).astype(np.float32)
    b = rng.normal(size=(300, 40)).astype(np.float32)
    a[299, 39], b[0, 0] = np.nan, -np.inf
    return a, b


def reference(a, b):
    return a + b
