"""Softmax with an implicit extra zero logit ("null class"): p = exp(x - m) / (exp(-m) +
sum exp(x - m)) with m = max(row max, 0), over 200 rows in 128-row tiles with a masked
partial last tile.

Covers: nl.max(axis=[1], keepdims=True, mask=), nl.maximum of a column with 0.0,
nl.subtract(..., mask=), nl.exp of a tile and of `0.0 - column`, nl.sum(axis=[1]), the `/`
and `+` operators between a tile and a [P, 1] column, unpacked 2-d nl.mgrid, masked load /
store."""
import math

import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def null_class_softmax(logits):
    out = nl.ndarray(logits.shape, dtype=logits.dtype, buffer=nl.shared_hbm)
    n_rows, classes = logits.shape
    r, c = nl.mgrid[0:128, 0:classes]
    for blk in nl.affine_range(math.ceil(n_rows / 128)):
        keep = blk * 128 + r < n_rows
        x = nl.load(logits[blk * 128 + r, c], mask=keep)
        top = nl.maximum(nl.max(x, axis=[1], keepdims=True, mask=keep), 0.0)
        weights = nl.exp(nl.subtract(x, top, mask=keep))
        null_weight = nl.exp(0.0 - top)
        probs = weights / (nl.sum(weights, axis=[1]) + null_weight)
        nl.store(out[blk * 128 + r, c], value=probs, mask=keep)
    return out


KERNEL = null_class_softmax
TOLERANCE = {"rtol": 1e-5, "atol": 1e-7}


def make_inputs(rng):
    logits = rng.normal(0, 3, size=(200, 36)).astype(np.float32)
    logits[10] = -400.0
    logits[140] = 250.0 + logits[140]
    return (logits,)


def reference(logits):
    x = logits.astype(np.float64)
    m = np.maximum(x.max(axis=1, keepdims=True), 0.0)
    w = np.exp(x - m)
    return (w / (np.exp(-m) + w.sum(axis=1, keepdims=True))).astype(np.float32)
