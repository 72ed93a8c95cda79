"""Only the top-left 100 x 50 corner of a [128, 64] tensor is doubled and stored; the rest
of the output keeps zeros.

Covers: a mask `(i_p < 100) & (i_f < 50)` on nl.load, nl.multiply and nl.store."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def corner(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    m = (i_p < 100) & (i_f < 50)
    t = nl.load(x[i_p, i_f], mask=m)
    nl.store(out[i_p, i_f], value=nl.multiply(t, 2.0, mask=m), mask=m)
    return out


KERNEL = corner


def make_inputs(rng):
    return (rng.normal(size=(128, 64)).astype(np.float32),)


def reference(x):
    out = np.zeros_like(x)
    out[:100, :50] = x[:100, :50] * np.float32(2)
    return out
