"""SPMD tensor addition: a 2-d launch grid, one [128, 512] tile per program, mgrid indices
shifted by nl.program_id.
SOURCE: aws-neuron/nki-samples src/nki_samples/tutorials/tensor_addition/spmd_tensor_addition_nki_kernels.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def spmd_add(a_input, b_input):
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    row0 = nl.program_id(0) * 128
    col0 = nl.program_id(1) * 512
    ip, jf = nl.mgrid[0:128, 0:512]
    rows, cols = row0 + ip, col0 + jf
    a_tile = nl.load(a_input[rows, cols])
    b_tile = nl.load(b_input[rows, cols])
    nl.store(c_output[rows, cols], value=a_tile + b_tile)
    return c_output


def launch(a_input, b_input):
    return spmd_add[a_input.shape[0] // 128, a_input.shape[1] // 512](a_input, b_input)


KERNEL = spmd_add[2, 2]
TOLERANCE = {"rtol": 1e-3, "atol": 1e-3}


def make_inputs(rng):
    return (rng.random((256, 1024)).astype(np.float16), rng.random((256, 1024)).astype(np.float16))


def reference(a, b):
    return a + b
