"""RMSNorm in the NKI 1.x tutorial style: mgrid indices, nl.load / nl.store.

out = x / sqrt(mean(x^2) + eps) * g for x [N, D] (N a multiple of 128) and weight g [D]:
the squared row sum comes from the activation engine's accumulator (activation with
reduce_op=nl.add), the weight row is broadcast to every partition by the DMA.
"""

import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def rmsnorm(a_tensor, g_tensor, eps=1e-6):
    n, d = a_tensor.shape
    out_tensor = nl.ndarray((n, d), dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    ix, iy = nl.mgrid[0:128, 0:d]

    g_row = g_tensor.reshape((1, d))
    g_tile = nl.load(g_row[0 * ix, iy])    # the same weight row in all 128 partitions

    for i in nl.affine_range(n // 128):
        a_tile = nl.load(a_tensor[i * 128 + ix, iy])

        square = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.sbuf)
        square_sum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=square, op=nl.square, data=a_tile, reduce_op=nl.add,
                        reduce_res=square_sum, reduce_cmd=nisa.reduce_cmd.reset_reduce)

        mean = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mean, data=square_sum, op0=nl.multiply, operand0=1.0 / d,
                           op1=nl.add, operand1=eps)
        rstd = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=rstd, op=nl.rsqrt, data=mean)

        out_tile = nl.ndarray((128, d), dtype=a_tensor.dtype, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(dst=out_tile, data=a_tile, op0=nl.multiply, operand0=rstd,
                                  op1=nl.multiply, operand1=g_tile)
        nl.store(out_tensor[i * 128 + ix, iy], value=out_tile)
    return out_tensor


KERNEL = rmsnorm
TOLERANCE = {"rtol": 2e-5, "atol": 1e-5}


def make_inputs(rng):
    a = rng.normal(0.0, 2.0, size=(256, 64)).astype(np.float32)
    a[0, :] = 0.0    # an all-zero row: eps keeps it finite
    g = rng.uniform(-1.5, 1.5, size=(64,)).astype(np.float32)
    return (a, g)


def reference(a, g, eps=1e-6):
    a64 = a.astype(np.float64)
    rstd = 1.0 / np.sqrt((a64 * a64).mean(axis=1, keepdims=True) + eps)
    return (a64 * rstd * g).astype(np.float32)
