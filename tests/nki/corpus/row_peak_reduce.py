"""Per-row peak of a [72, 260] tensor with tile-returning nisa.tensor_reduce(np.maximum, ...,
axis=[1]) and the per-row sum with np.add, returned as two [72, 1] columns stored through an
unpacked nl.mgrid.

Covers: nisa.tensor_reduce on an indexed tile view `t[i_p, i_f]` with axis given as a list,
np.maximum and np.add reduce ops, `i_p, i_f = nl.mgrid[0:72, 0:1]` for a [P, 1] store."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def row_peak(readings):
    rows, cols = readings.shape
    peak = nl.ndarray([rows, 1], dtype=readings.dtype, buffer=nl.shared_hbm)
    total = nl.ndarray([rows, 1], dtype=readings.dtype, buffer=nl.shared_hbm)
    r = nl.arange(rows)[:, None]
    c = nl.arange(cols)[None, :]
    tile = nl.load(readings[r, c])
    top = nisa.tensor_reduce(np.maximum, tile[r, c], axis=[1])
    acc = nisa.tensor_reduce(np.add, tile[r, c], axis=[1])
    pr, pc = nl.mgrid[0:rows, 0:1]
    nl.store(peak[pr, pc], top)
    nl.store(total[pr, pc], acc)
    return peak, total


KERNEL = row_peak
TOLERANCE = {"rtol": 1e-5, "atol": 1e-4}


def make_inputs(rng):
    readings = rng.normal(size=(72, 260)).astype(np.float32)
    readings[5] = -np.abs(readings[5]) - 3.0
    return (readings,)


def reference(readings):
    return (readings.max(axis=1, keepdims=True),
            readings.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32))
