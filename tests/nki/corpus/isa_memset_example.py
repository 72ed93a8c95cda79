"""nki.isa.memset docstring example (tile-returning form): a [128, 128] float32 tile of 0.2
in a kernel without inputs.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_isa_memset.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def memset_example():
    a_tensor = nl.ndarray([128, 128], dtype=nl.float32, buffer=nl.shared_hbm)
    a = nisa.memset(shape=(128, 128), value=0.2, dtype=nl.float32)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(128)[None, :]
    nl.store(a_tensor[i_p, i_f], a)
    return a_tensor


KERNEL = memset_example


def make_inputs(rng):
    return ()


def reference():
    return np.full((128, 128), 0.2, dtype=np.float32)
