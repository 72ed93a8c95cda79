"""nki.isa.activation docstring examples (tile-returning form): exp of a [128, 1024] tile,
and square(b * 2.0 + c) with a [128, 1] bias tile cast to bfloat16.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_isa_activation.py"""
import ml_dtypes
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def activation_examples(a_tensor, b_tensor, c_tensor):
    a_out = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    b_out = nl.ndarray(b_tensor.shape, dtype=b_tensor.dtype, buffer=nl.shared_hbm)
    a = nl.load(a_tensor)
    nl.store(a_out, nisa.activation(op=nl.exp, data=a))
    b = nl.load(b_tensor)
    c = nl.load(c_tensor)
    squared = nisa.activation(op=np.square, data=b, bias=c, scale=2.0, dtype=nl.bfloat16)
    nl.store(b_out, squared)
    return a_out, b_out


KERNEL = activation_examples
TOLERANCE = {"rtol": 1e-2, "atol": 1e-5}


def make_inputs(rng):
    return (rng.random((128, 1024)).astype(np.float32), rng.random((128, 512)).astype(np.float32),
            rng.random((128, 1)).astype(np.float32))


def reference(a, b, c):
    squared = np.square(b * 2 + c).astype(ml_dtypes.bfloat16).astype(np.float32)
    return np.exp(a), squared
