"""Element-wise maximum and sum of two [64, 150] tensors with tile-returning
nisa.tensor_tensor, every tile carrying a `tensor[...]` annotation from nki.typing.

Covers: nki.typing.tensor shape annotations on local assignments, nisa.tensor_tensor(a, b,
op=nl.maximum) and op=nl.add, whole-tensor nl.load / nl.store."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki.typing import tensor


@nki.jit(mode="simulation")
def upper_envelope(left_hbm, right_hbm):
    upper = nl.ndarray(left_hbm.shape, dtype=left_hbm.dtype, buffer=nl.shared_hbm)
    both = nl.ndarray(left_hbm.shape, dtype=left_hbm.dtype, buffer=nl.shared_hbm)
    left: tensor[64, 150] = nl.load(left_hbm)
    right: tensor[64, 150] = nl.load(right_hbm)
    peak: tensor[64, 150] = nisa.tensor_tensor(left, right, op=nl.maximum)
    total: tensor[64, 150] = nisa.tensor_tensor(left, right, op=nl.add)
    nl.store(upper, peak)
    nl.store(both, total)
    return upper, both


KERNEL = upper_envelope


def make_inputs(rng):
    return (rng.normal(size=(64, 150)).astype(np.float32), rng.normal(size=(64, 150)).astype(np.float32))


def reference(left, right):
    return np.maximum(left, right), left + right
