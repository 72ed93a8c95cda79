"""Linear extrapolation from two frames, next = 2 * cur - prev, on whole [128, 300] tensors.

Covers: whole-tensor nl.load of kernel arguments, tile-returning nl.subtract and nl.add, an
HBM output allocated with nl.ndarray after the computation, nl.store(value=)."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def extrapolate(prev_frame, cur_frame):
    prev = nl.load(prev_frame)
    cur = nl.load(cur_frame)
    velocity = nl.subtract(cur, prev)
    predicted = nl.add(cur, velocity)
    nxt = nl.ndarray(cur_frame.shape, dtype=cur_frame.dtype, buffer=nl.shared_hbm)
    nl.store(nxt, value=predicted)
    return nxt


KERNEL = extrapolate


def make_inputs(rng):
    return (rng.normal(size=(128, 300)).astype(np.float32), rng.normal(size=(128, 300)).astype(np.float32))


def reference(prev, cur):
    return (2.0 * cur.astype(np.float64) - prev).astype(np.float32)
