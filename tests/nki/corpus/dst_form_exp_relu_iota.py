"""max(exp(x / 2) - 1, 0), its row maximum, and an int32 ramp 5 - p + 2 f.

Covers: NKI 2.x dst forms: nisa.dma_copy in and out, nisa.activation(dst=, bias=None,
scale=0.5), nisa.tensor_scalar(dst=, op1=), nisa.tensor_reduce(dst=, axis=1, keepdims=True),
nisa.memset(dst=), nisa.iota(dst=, pattern=, offset=, channel_multiplier=-1),
nisa.tensor_copy(dst=, src=)."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def dst_form(x):
    p, f = x.shape
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    red = nl.ndarray((p, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((p, f), dtype=nl.int32, buffer=nl.shared_hbm)
    t = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    a = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=a, op=nl.exp, data=t, bias=None, scale=0.5)
    b = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=b, data=a, op0=nl.subtract, operand0=1.0, op1=nl.maximum, operand1=0.0)
    r = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=r, op=nl.maximum, data=b, axis=1, keepdims=True)
    z = nl.ndarray((p, f), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=z, value=0)
    nisa.iota(dst=z, pattern=[[2, f]], offset=5, channel_multiplier=-1)
    c = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=c, src=b)
    nisa.dma_copy(dst=out, src=c)
    nisa.dma_copy(dst=red, src=r)
    nisa.dma_copy(dst=idx, src=z)
    return out, red, idx


KERNEL = dst_form
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def make_inputs(rng):
    return (rng.normal(size=(96, 40)).astype(np.float32),)


def reference(x):
    b = np.maximum(np.exp(0.5 * x.astype(np.float64)) - 1, 0).astype(np.float32)
    p = np.arange(96)[:, None]
    f = np.arange(40)[None, :]
    return b, b.max(axis=1, keepdims=True), (5 - p + 2 * f).astype(np.int32)
