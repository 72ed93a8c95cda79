"""Row-wise exp and scale of a ragged [n_rows, 96] tensor in 128-row tiles (a debugging example).

The last tile is ragged: its load and store are masked to the rows that exist, the arithmetic
between them runs on the whole tile (the rows past the end hold nothing anyone wrote, and never
reach the output). `short_load=4` plants a bug: the load's mask stops 4 rows early while the
store still writes every row, so the simulator reports uninitialised rows reaching HBM, at the
kernel line that first read them.
"""

import math

import numpy as np

import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


def ragged_exp(x, short_load=0):
    n_rows, width = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:width]
    for blk in nl.affine_range(math.ceil(n_rows / 128)):
        rows = blk * 128 + i_p
        tile = nl.ndarray((128, width), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile[i_p, i_f], src=x[rows, i_f], mask=(rows < n_rows - short_load))
        e = nl.ndarray((128, width), dtype=x.dtype, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=tile)                  # Scalar Engine
        s = nl.ndarray((128, width), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=s, data=tile, op0=nl.multiply, operand0=0.5)   # Vector Engine
        y = nl.ndarray((128, width), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=y, data1=e, data2=s, op=nl.add)
        nl.store(out[rows, i_f], value=y, mask=(rows < n_rows))
    return out


KERNEL = ragged_exp
TOLERANCE = {"rtol": 1e-6, "atol": 1e-6}


def make_inputs(rng):
    return (rng.uniform(-2, 2, size=(200, 96)).astype(np.float32),)


def reference(x):
    return (np.exp(x.astype(np.float64)) + 0.5 * x).astype(np.float32)
