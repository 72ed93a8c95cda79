"""ReLU and per-row scaling as written in public user kernels: `nl.maximum(t, nl.float32(0.0))`
into a pre-declared tile, the tile-returning `nisa.tensor_scalar(data=..., op0=..., operand0=
column, dtype=...)`, and `nl.copy(x, dtype=nl.bfloat16)` for the down-cast.
SOURCE: pattern of GitHub user kernels found with the code search ("= nisa.tensor_scalar(")"""
import ml_dtypes
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki.language import par_dim


@nki.jit
def relu_scale(qk, w):
    h, t = qk.shape
    out = nl.ndarray((h, t), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    qk_tile = nl.load(qk)
    w_col = nl.load(w)
    relu_qk = nl.ndarray((par_dim(h), t), dtype=nl.float32, buffer=nl.sbuf)
    relu_qk[...] = nl.maximum(qk_tile, nl.float32(0.0))
    scored = nl.ndarray((par_dim(h), t), dtype=nl.float32, buffer=nl.sbuf)
    scored[...] = nisa.tensor_scalar(data=relu_qk, op0=nl.multiply, operand0=w_col, dtype=nl.float32)
    scored_bf = nl.ndarray((par_dim(h), t), dtype=nl.bfloat16, buffer=nl.sbuf)
    scored_bf[...] = nl.copy(scored, dtype=nl.bfloat16)
    nl.store(out, scored_bf)
    return out


KERNEL = relu_scale
TOLERANCE = {"rtol": 1e-2, "atol": 1e-6}


def make_inputs(rng):
    return (rng.normal(size=(64, 96)).astype(np.float32), rng.normal(size=(64, 1)).astype(np.float32))


def reference(qk, w):
    return (np.maximum(qk, 0.0) * w).astype(ml_dtypes.bfloat16)
