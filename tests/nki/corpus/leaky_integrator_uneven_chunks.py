"""A leaky integrator h[t] = leak[t] * h[t-1] + drive[t] over a [100, 300] sequence, scanned
in three uneven chunks (0:90, 90:210, 210:300); each chunk after the first starts from the
last column of the previous one.

Covers: nisa.tensor_tensor_scan(op0=np.multiply, op1=np.add) with initial=0 and with
initial=<column view of an earlier result> (`h[:, 89]`), tile slices `t[:, a:b]` as operands,
scan results assigned into slices of an nl.ndarray tile, a host-side loop over chunk bounds."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def leaky_chunks(leak_hbm, drive_hbm):
    rows, steps = leak_hbm.shape
    state_hbm = nl.ndarray((rows, steps), dtype=leak_hbm.dtype, buffer=nl.shared_hbm)
    leak = nl.load(leak_hbm)
    drive = nl.load(drive_hbm)
    state = nl.ndarray(shape=(rows, steps), dtype=nl.float32)
    bounds = (0, 90, 210, steps)
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        start = 0 if lo == 0 else state[:, lo - 1]
        state[:, lo:hi] = nisa.tensor_tensor_scan(leak[:, lo:hi], drive[:, lo:hi], initial=start,
                                                  op0=np.multiply, op1=np.add)
    nl.store(state_hbm, state)
    return state_hbm


KERNEL = leaky_chunks
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def make_inputs(rng):
    return (rng.uniform(0.7, 0.99, (100, 300)).astype(np.float32),
            rng.normal(size=(100, 300)).astype(np.float32))


def reference(leak, drive):
    leak, drive = leak.astype(np.float64), drive.astype(np.float64)
    state = np.zeros_like(leak)
    h = np.zeros(leak.shape[0])
    for t in range(leak.shape[1]):
        h = leak[:, t] * h + drive[:, t]
        state[:, t] = h
    return state.astype(np.float32)
