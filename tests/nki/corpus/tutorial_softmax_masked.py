"""Row softmax with the tile-level API: 128-row tiles, the last one partial (mask=).
SOURCE: aws-neuron/nki-samples src/nki_samples/tutorials/softmax/softmax_nki_kernels.py"""
import math

import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def softmax(a_tensor):
    out = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    ix, iy = nl.mgrid[0:128, 0:a_tensor.shape[1]]
    n_rows = a_tensor.shape[0]
    for t in nl.affine_range(math.ceil(n_rows / 128)):
        live = t * 128 + ix < n_rows
        x = nl.load(a_tensor[t * 128 + ix, iy], mask=live)
        row_max = nl.max(x, axis=[1], keepdims=True, mask=live)
        centered = nl.subtract(x, row_max, mask=live)
        num = nl.exp(centered)
        den = nl.sum(num, axis=[1])
        probs = num / den
        nl.store(out[t * 128 + ix, iy], value=probs, mask=live)
    return out


KERNEL = softmax


def make_inputs(rng):
    a = rng.normal(0, 3, size=(200, 48)).astype(np.float32)
    a[150, :] = -300.0
    return (a,)


def reference(a):
    e = np.exp(a.astype(np.float64) - a.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
