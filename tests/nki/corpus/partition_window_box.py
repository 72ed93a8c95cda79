"""exp of a [36, 8] window (partitions 64..99, columns 2..9) of a [128, 16] int-valued tile,
scaled by the window's column sums: a two-sided mask on the partition axis and on a free
axis at once, starting on the compute engines' partition 64.

Covers: two-sided masks `(i_p >= 64) & (i_p < 100)` with `(i_f >= 2) & (i_f < 10)` on
nl.exp and nisa.tensor_scalar (1.x form), an nl.load whose box starts on partition 5 (a DMA
copy starts anywhere), nisa.tensor_reduce over a full-shape masked result (the box it holds),
a masked store of the window into a smaller output."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def window_exp(x_hbm, y_hbm):
    out = nl.ndarray((36, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    rows = nl.ndarray((123, 16), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:16]
    window = (i_p >= 64) & (i_p < 100) & (i_f >= 2) & (i_f < 10)
    x = nl.load(x_hbm[i_p, i_f])
    e = nl.exp(x, mask=window)
    total = nisa.tensor_reduce(nl.add, e, axis=[1])
    scaled = nisa.tensor_scalar(e, nl.multiply, total, mask=window)
    nl.store(out[i_p - 64, i_f - 2], scaled, mask=window)
    tail = nl.load(y_hbm[i_p, i_f], mask=(i_p >= 5))
    nl.store(rows[i_p - 5, i_f], tail, mask=(i_p >= 5))
    return out, rows


KERNEL = window_exp
TOLERANCE = {"rtol": 1e-5, "atol": 0}


def make_inputs(rng):
    x = rng.integers(-4, 3, size=(128, 16)).astype(np.float32)
    y = rng.normal(size=(128, 16)).astype(np.float32)
    return x, y


def reference(x, y):
    e = np.exp(x[64:100, 2:10].astype(np.float64))
    return (e * e.sum(axis=1, keepdims=True)).astype(np.float32), y[5:]
