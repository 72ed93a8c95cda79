"""An int32 row [1, 40] loaded to SBUF and broadcast to 100 partitions, exact for the full
int32 range.

Covers: nl.load(t, dtype=t.dtype), the function form nl.broadcast_to(tile, shape=(P, F)) from
one partition, integer data stored unchanged."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def broadcast_row(labels):
    stacked = nl.ndarray([100, labels.shape[1]], labels.dtype, buffer=nl.shared_hbm)
    row = nl.load(labels, dtype=labels.dtype)
    nl.store(stacked, nl.broadcast_to(row, shape=(100, labels.shape[1])))
    return stacked


KERNEL = broadcast_row
TOLERANCE = {"rtol": 0, "atol": 0}


def make_inputs(rng):
    labels = rng.integers(-2**31, 2**31 - 1, size=(1, 40)).astype(np.int32)
    labels[0, :2] = [-2**31, 2**31 - 1]
    return (labels,)


def reference(labels):
    return np.tile(labels, (100, 1))
