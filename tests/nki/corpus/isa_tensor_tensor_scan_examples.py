"""nki.isa.tensor_tensor_scan docstring example: a [128, 1024] scan in two halves, the second
seeded with the last column of the first (`initial=c[:, 511]`); results assigned into slices.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_isa_tensor_tensor_scan.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def scan_examples(a_tensor, b_tensor):
    c_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    a = nl.load(a_tensor)
    b = nl.load(b_tensor)
    c = nl.ndarray(shape=(128, 1024), dtype=nl.float32)
    c[:, 0:512] = nisa.tensor_tensor_scan(a[:, 0:512], b[:, 0:512], initial=0, op0=np.multiply,
                                          op1=np.add)
    c[:, 512:1024] = nisa.tensor_tensor_scan(a[:, 512:1024], b[:, 512:1024], initial=c[:, 511],
                                             op0=np.multiply, op1=np.add)
    nl.store(c_tensor, c)
    return c_tensor


KERNEL = scan_examples
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def make_inputs(rng):
    return (rng.random((128, 1024)).astype(np.float32), rng.random((128, 1024)).astype(np.float32))


def reference(a, b):
    out = np.zeros(a.shape)
    out[:, 0] = b[:, 0]
    for i in range(1, a.shape[1]):
        out[:, i] = a[:, i] * out[:, i - 1] + b[:, i]
    return out.astype(np.float32)
