"""nl.broadcast_to docstring example: a [1, 64] int32 row loaded to SBUF and broadcast to
128 partitions.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_nl_broadcast.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def broadcast_example(in_tensor):
    out_tensor = nl.ndarray([128, 64], in_tensor.dtype, buffer=nl.shared_hbm)
    in_tile = nl.load(in_tensor, dtype=in_tensor.dtype)
    out_tile = nl.broadcast_to(in_tile, shape=(128, in_tensor.shape[1]))
    nl.store(out_tensor, out_tile)
    return out_tensor


KERNEL = broadcast_example
TOLERANCE = {"rtol": 0, "atol": 0}


def make_inputs(rng):
    return (rng.integers(-2**31, 2**31 - 1, size=(1, 64)).astype(np.int32),)


def reference(a):
    return np.repeat(a, 128, axis=0)
