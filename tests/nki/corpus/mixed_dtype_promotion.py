"""Tile-level ops mixing dtypes: a bf16 tile plus a float32 tile, an int32 tile times 0.5
into float32, a comparison (bool) tile used as a 0/1 multiplier, nl.exp into bf16.

Covers: nl.add of two SBUF tiles of different dtypes (the bf16 one copied to float32
first: BIR needs one dtype), nl.multiply(..., dtype=), nl.greater, nl.exp(dtype=)."""
import ml_dtypes
import numpy as np
import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def promote(a, b, k):
    o1 = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    o3 = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    o4 = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    ta = nl.load(a)
    tb = nl.load(b)
    tk = nl.load(k)
    nl.store(o1, nl.add(ta, tb))
    nl.store(o2, nl.multiply(tk, 0.5, dtype=nl.float32))
    nl.store(o3, nl.multiply(nl.greater(tb, 0.0), tb))
    nl.store(o4, nl.exp(tb, dtype=nl.bfloat16))
    return o1, o2, o3, o4


KERNEL = promote
TOLERANCE = {"rtol": 1e-2, "atol": 1e-3}


def make_inputs(rng):
    return (rng.normal(size=(32, 16)).astype(ml_dtypes.bfloat16), rng.normal(size=(32, 16)).astype(np.float32),
            rng.integers(-1000, 1000, size=(32, 16)).astype(np.int32))


def reference(a, b, k):
    return (a.astype(np.float32) + b, k.astype(np.float32) * np.float32(0.5), np.where(b > 0, b, 0).astype(np.float32),
            np.exp(b).astype(ml_dtypes.bfloat16))
