"""RMSNorm of 256 rows of 512: y = x / sqrt(mean(x^2) + eps) * gamma, in two 128-row tiles (a
row of 100x values and a row of zeros among them).

Covers: nisa.activation_reduce(op=nl.square, reduce_op=np.add, reduce_res=<[P, 1] tile>),
tensor_scalar with a Python-float immediate 1/cols and op1, nisa.activation(op=nl.rsqrt),
tensor_scalar with a [P, 1] tile operand, a [1, F] row .broadcast_to((P, F))."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def rmsnorm(x, gamma):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    g = nl.load(gamma[0:1, 0:cols])
    for t in nl.affine_range(rows // 128):
        tile = nl.load(x[t * 128:(t + 1) * 128, 0:cols])
        ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        sq = nisa.activation_reduce(op=nl.square, data=tile, reduce_op=np.add, reduce_res=ss)
        ms = nisa.tensor_scalar(ss, np.multiply, 1.0 / cols, op1=np.add, operand1=1e-6)
        inv = nisa.activation(op=nl.rsqrt, data=ms)
        y = nisa.tensor_scalar(tile, np.multiply, inv)
        y = nisa.tensor_tensor(y, g.broadcast_to((128, cols)), op=np.multiply)
        nl.store(out[t * 128:(t + 1) * 128, 0:cols], y)
    return out


KERNEL = rmsnorm
TOLERANCE = {"rtol": 2e-5, "atol": 1e-5}


def make_inputs(rng):
    x = rng.normal(size=(256, 512)).astype(np.float32)
    x[3] *= 100.0
    x[130] = 0.0
    return x, rng.normal(size=(1, 512)).astype(np.float32)


def reference(x, gamma):
    x64 = x.astype(np.float64)
    r = 1.0 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + 1e-6)
    return (x64 * r * gamma).astype(np.float32)
