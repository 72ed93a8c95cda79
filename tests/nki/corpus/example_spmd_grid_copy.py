"""A [4, 2] launch grid where program (i, j) copies element block a[i, j].
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_spmd_grid.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def spmd_copy(a):
    b = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(1)
    block = nl.load(a[i, j])
    nl.store(b[i, j], block)
    return b


KERNEL = spmd_copy[4, 2]


def make_inputs(rng):
    return (rng.random((4, 2, 1, 1)).astype(np.float32),)


def reference(a):
    return a.copy()
