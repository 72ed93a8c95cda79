"""nki.isa.tensor_reduce docstring example (tile-returning form): add-reduce a [128, 512]
tile along axis 1 into a [128, 1] tile, stored through an mgrid index.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_isa_reduce.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def reduce_example(a_tensor):
    b_tensor = nl.ndarray([a_tensor.shape[0], 1], dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    i_p_a = nl.arange(128)[:, None]
    i_f_a = nl.arange(512)[None, :]
    a = nl.load(a_tensor[i_p_a, i_f_a])
    b = nisa.tensor_reduce(np.add, a[i_p_a, i_f_a], axis=[1])
    i_p_b, i_f_b = nl.mgrid[0:128, 0:1]
    nl.store(b_tensor[i_p_b, i_f_b], b)
    return b_tensor


KERNEL = reduce_example
TOLERANCE = {"rtol": 1e-5, "atol": 1e-4}


def make_inputs(rng):
    return (rng.normal(size=(128, 512)).astype(np.float32),)


def reference(a):
    return a.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32)
