"""Causal masking of a [128, 128] score tile: the upper triangle becomes -30000, then the
row maximum.

Covers: nisa.iota(i_p - i_f) (a negative free multiplier), tensor_scalar(np.greater_equal),
tensor_scalar with two ops, tensor_tensor multiply / add, tensor_reduce(np.maximum)."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def causal(s):
    out = nl.ndarray(s.shape, dtype=s.dtype, buffer=nl.shared_hbm)
    top = nl.ndarray((128, 1), dtype=s.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(128)[None, :]
    diff = nisa.iota(i_p - i_f, dtype=nl.float32)
    keep = nisa.tensor_scalar(diff, np.greater_equal, 0.0)
    t = nl.load(s)
    kept = nisa.tensor_tensor(t, keep, op=np.multiply)
    pen = nisa.tensor_scalar(keep, np.subtract, 1.0, op1=np.multiply, operand1=30000.0)
    m = nisa.tensor_tensor(kept, pen, op=np.add)
    nl.store(out, m)
    nl.store(top, nisa.tensor_reduce(np.maximum, m, axis=[1]))
    return out, top


KERNEL = causal


def make_inputs(rng):
    return (rng.normal(size=(128, 128)).astype(np.float32),)


def reference(s):
    keep = np.tril(np.ones((128, 128), np.float32))
    m = s * keep + (keep - np.float32(1)) * np.float32(30000)
    return m, m.max(axis=1, keepdims=True)
