"""Cumulative sum along 1024 columns in four 256-column chunks.

Covers: tensor_tensor_scan(ones, chunk, initial=<[P, 1] tile>, op0=np.multiply, op1=np.add),
nl.sequential_range, the last column carried with `carry[...] = s[0:128, 255]`, nl.ones."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def cumsum(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    ones = nl.ones((128, 256), dtype=nl.float32)
    carry = nl.zeros((128, 1), dtype=nl.float32)
    for c in nl.sequential_range(cols // 256):
        chunk = nl.load(x[0:128, c * 256:(c + 1) * 256])
        s = nisa.tensor_tensor_scan(ones, chunk, initial=carry, op0=np.multiply, op1=np.add)
        carry[...] = s[0:128, 255]
        nl.store(out[0:128, c * 256:(c + 1) * 256], s)
    return out


KERNEL = cumsum
TOLERANCE = {"rtol": 1e-4, "atol": 1e-3}


def make_inputs(rng):
    return (rng.normal(size=(128, 1024)).astype(np.float32),)


def reference(x):
    return np.cumsum(x.astype(np.float64), axis=1).astype(np.float32)
