"""MLP epilogue: bf16 output of gelu(h + bias) in the transposed (feature-major) layout.

h^T is [F, T] float32 (features on partitions, F <= 128), bias is [F]: one activation
instruction applies the per-partition bias and gelu and writes bfloat16.
"""

import math

import ml_dtypes
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def gelu_bias_epilogue(h_t, bias):
    f, t = h_t.shape
    out = nl.ndarray((f, t), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    h_tile = nl.ndarray((f, t), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=h_tile, src=h_t)
    bias_col = nl.ndarray((f, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=bias_col, src=bias.reshape((f, 1)))

    act = nl.ndarray((f, t), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.activation(dst=act, op=nl.gelu, data=h_tile, bias=bias_col, scale=1.0)
    nisa.dma_copy(dst=out, src=act)
    return out


KERNEL = gelu_bias_epilogue
TOLERANCE = {"rtol": 1e-2, "atol": 1e-2}   # bf16 output: 8 bits of mantissa


def make_inputs(rng):
    h_t = rng.normal(0.0, 2.0, size=(128, 80)).astype(np.float32)
    bias = rng.normal(0.0, 0.5, size=(128,)).astype(np.float32)
    return (h_t, bias)


def reference(h_t, bias):
    x = h_t.astype(np.float64) + bias[:, None]
    erf = np.vectorize(math.erf)
    return (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(ml_dtypes.bfloat16)
