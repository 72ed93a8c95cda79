"""3 v - 1 of a 1-d tensor of 100 elements.

Covers: a 1-d HBM argument and result (KLR shape [1, 100]), nl.load of a 1-d tensor into a
tile whose only dim is the partition dim."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def vec(v):
    out = nl.ndarray(v.shape, dtype=v.dtype, buffer=nl.shared_hbm)
    t = nl.load(v)
    nl.store(out, nisa.tensor_scalar(t, np.multiply, 3.0, op1=np.subtract, operand1=1.0))
    return out


KERNEL = vec


def make_inputs(rng):
    return (rng.normal(size=(100,)).astype(np.float32),)


def reference(v):
    return v * np.float32(3) - np.float32(1)
