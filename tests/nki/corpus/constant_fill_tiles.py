"""Constant tiles without any input: a [96, 40] float32 tile of -3.25 and a [32, 8] int32 tile
of 41, each from a tile-returning nisa.memset.

Covers: a kernel with no arguments, nisa.memset(shape=, value=, dtype=) for a float and an
integer dtype, stores through nl.arange partition / free indices, two returned tensors."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def constant_fill():
    floats = nl.ndarray([96, 40], dtype=nl.float32, buffer=nl.shared_hbm)
    ints = nl.ndarray([32, 8], dtype=nl.int32, buffer=nl.shared_hbm)
    nl.store(floats[nl.arange(96)[:, None], nl.arange(40)[None, :]],
             nisa.memset(shape=(96, 40), value=-3.25, dtype=nl.float32))
    nl.store(ints[nl.arange(32)[:, None], nl.arange(8)[None, :]],
             nisa.memset(shape=(32, 8), value=41, dtype=nl.int32))
    return floats, ints


KERNEL = constant_fill


def make_inputs(rng):
    return ()


def reference():
    return np.full((96, 40), -3.25, np.float32), np.full((32, 8), 41, np.int32)
