"""activate2 (NeuronCore-v4): gelu(x * scale + shift) with the row sums of the result.

The tensor-scalar stage takes a per-partition [P, 1] scale column and a scalar shift;
reduce_cmd=reset_reduce folds each row of the activated values into row_sum.
"""

import math

import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def scaled_gelu_activate2(x, scale, shift=0.25):
    p, n = x.shape
    out = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.shared_hbm, name="act")
    sums = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.shared_hbm, name="row_sum")
    data = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=data, src=x)
    scale_col = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=scale_col, src=scale)

    act = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    row_sum = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activate2(dst=act, op=nl.gelu, data=data, imm0=scale_col, imm1=shift, op0=nl.multiply,
                   op1=nl.add, reduce_op=nl.add, reduce_res=row_sum,
                   reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.dma_copy(dst=out, src=act)
    nisa.dma_copy(dst=sums, src=row_sum)
    return out, sums


KERNEL = scaled_gelu_activate2
TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}


def make_inputs(rng):
    x = rng.normal(0.0, 1.5, size=(64, 48)).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, size=(64, 1)).astype(np.float32)
    return (x, scale)


def reference(x, scale, shift=0.25):
    v = x.astype(np.float64) * scale + shift
    erf = np.vectorize(math.erf)
    g = 0.5 * v * (1.0 + erf(v / math.sqrt(2.0)))
    return g.astype(np.float32), g.sum(axis=1, keepdims=True).astype(np.float32)
