"""nki.isa.reciprocal and nki.isa.tensor_copy docstring examples (tile-returning forms):
1 / x of a tile loaded through nl.mgrid, and a copy on the Vector Engine.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_isa_reciprocal.py and
general/nki/test/test_nki_isa_tensor_copy.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def reciprocal_copy(in_tensor, small_tensor):
    out_tensor = nl.ndarray([128, 512], dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    x = nl.load(in_tensor[nl.mgrid[0:128, 0:512]])
    y = nisa.reciprocal(x)
    nl.store(out_tensor[nl.mgrid[0:128, 0:512]], value=y)
    copied = nl.ndarray(small_tensor.shape, dtype=small_tensor.dtype, buffer=nl.shared_hbm)
    s = nl.load(small_tensor)
    s_copy = nisa.tensor_copy(s, engine=nisa.vector_engine)
    nl.store(copied, value=s_copy)
    return out_tensor, copied


KERNEL = reciprocal_copy
TOLERANCE = {"rtol": 1e-6, "atol": 0}


def make_inputs(rng):
    x = rng.uniform(0.1, 10.0, size=(128, 512)).astype(np.float32)
    x[0, :4] = [-2.0, -0.5, 1e-3, 4096.0]
    return (x, rng.normal(size=(8, 8)).astype(np.float32))


def reference(x, small):
    return (1.0 / x.astype(np.float64)).astype(np.float32), small.copy()
