"""nki.isa.tensor_tensor docstring example (tile-returning form) with `tensor[...]` shape
annotations from nki.typing.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_isa_tensor_tensor.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki.typing import tensor


@nki.jit(mode="simulation")
def tensor_tensor_example(a_tensor, b_tensor):
    c_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    a: tensor[128, 512] = nl.load(a_tensor)
    b: tensor[128, 512] = nl.load(b_tensor)
    c: tensor[128, 512] = nisa.tensor_tensor(a, b, op=nl.add)
    nl.store(c_tensor, c)
    return c_tensor


KERNEL = tensor_tensor_example


def make_inputs(rng):
    return (rng.normal(size=(128, 512)).astype(np.float32), rng.normal(size=(128, 512)).astype(np.float32))


def reference(a, b):
    return a + b
