"""Cube x**3 of the [40, 100] top-left corner of a [128, 256] tile: the mask cuts the partition
axis and the free axis at once, on the compute and on the store.

Covers: mask= built from `(i_p < a) & (i_f < b)` on nl.square and nl.multiply, a masked
nl.store of an indexed tile view into a smaller HBM output."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def corner_cube(field):
    corner = nl.ndarray([40, 100], dtype=field.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(256)[None, :]
    inside = (i_p < 40) & (i_f < 100)
    tile = nl.load(field[i_p, i_f])
    cubed = nl.multiply(nl.square(tile, mask=inside), tile, mask=inside)
    nl.store(corner[i_p, i_f], cubed[i_p, i_f], mask=inside)
    return corner


KERNEL = corner_cube
TOLERANCE = {"rtol": 1e-6, "atol": 0}


def make_inputs(rng):
    return (rng.normal(size=(128, 256)).astype(np.float32),)


def reference(field):
    c = field[:40, :100].astype(np.float64)
    return (c * c * c).astype(np.float32)
