"""The nki.simulate quick-start kernel: whole-tensor nl.load, nl.add, nl.store into an
output allocated after the computation.
SOURCE: aws-neuron/aws-neuron-sdk nki/examples/simulate/nki_simulate_example.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def add_kernel(a_ptr, b_ptr):
    a = nl.load(a_ptr)
    b = nl.load(b_ptr)
    result = nl.add(a, b)
    out = nl.ndarray(a_ptr.shape, dtype=a_ptr.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=result)
    return out


KERNEL = add_kernel


def make_inputs(rng):
    return (rng.random((128, 512)).astype(np.float32), rng.random((128, 512)).astype(np.float32))


def reference(a, b):
    return a + b
