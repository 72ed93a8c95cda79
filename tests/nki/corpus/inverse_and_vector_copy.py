"""Element-wise inverse 1 / x of a [96, 300] tensor loaded and stored through nl.mgrid, plus a
[5, 12] tensor copied on the Vector Engine.

Covers: an nl.mgrid[...] grid used directly as an index (not unpacked) on load and store,
tile-returning nisa.reciprocal, tile-returning nisa.tensor_copy(engine=nisa.vector_engine),
negative, tiny and large inputs, two returned tensors."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def inverse_and_copy(values, side):
    inverse = nl.ndarray([96, 300], dtype=values.dtype, buffer=nl.shared_hbm)
    grid = nl.mgrid[0:96, 0:300]
    nl.store(inverse[grid], value=nisa.reciprocal(nl.load(values[grid])))
    mirrored = nl.ndarray(side.shape, dtype=side.dtype, buffer=nl.shared_hbm)
    nl.store(mirrored, value=nisa.tensor_copy(nl.load(side), engine=nisa.vector_engine))
    return inverse, mirrored


KERNEL = inverse_and_copy
TOLERANCE = {"rtol": 1e-6, "atol": 0}


def make_inputs(rng):
    values = rng.uniform(-8.0, 8.0, size=(96, 300)).astype(np.float32)
    values[3, :5] = [-1e-4, 2e-3, 1e4, -7.5e3, 1.0]
    values[np.abs(values) < 1e-6] = 0.5
    return (values, rng.normal(size=(5, 12)).astype(np.float32))


def reference(values, side):
    return (1.0 / values.astype(np.float64)).astype(np.float32), side.copy()
