"""nki.isa.tensor_partition_reduce docstring examples (tile-returning form, out-parameters):
add over the partitions of a [128, 32, 4] tile, and the same per batch of a 4-d tensor.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_isa_partition_reduce.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.trace
def partition_reduce_examples(a_tensor, b_tensor, c_tensor, d_tensor):
    a = nl.load(a_tensor[0:128, 0:32, 0:4])
    b = nisa.tensor_partition_reduce(np.add, a)
    nl.store(b_tensor[0:1, 0:32, 0:4], b)
    for i in nl.affine_range(c_tensor.shape[0]):
        c = nl.load(c_tensor[i])
        d = nisa.tensor_partition_reduce(np.add, c)
        nl.store(d_tensor[i], d)


KERNEL = partition_reduce_examples
OUT_ARGS = (1, 3)
TOLERANCE = {"rtol": 1e-5, "atol": 1e-4}


def make_inputs(rng):
    return (rng.random((128, 32, 4)).astype(np.float32), np.zeros((1, 32, 4), np.float32),
            rng.random((4, 128, 32, 8)).astype(np.float32), np.zeros((4, 1, 32, 8), np.float32))


def reference(a, b, c, d):
    return (a.astype(np.float64).sum(axis=0, keepdims=True).astype(np.float32),
            c.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32))
