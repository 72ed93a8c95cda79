"""RMSNorm as user kernels write it with tile-returning NKI 1.x calls: sum of squares from
activation_reduce(op=nl.square, reduce_op=np.add) with a zero bias tile, mean + eps with a
two-op tensor_scalar, rsqrt by activation, a masked partial last tile, scaled by a weight row.
SOURCE: pattern of GitHub user kernels found with the code search ("nisa.activation_reduce(")"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def rmsnorm_act_reduce(x, weight, eps):
    seqlen, dim = x.shape
    pmax = nl.tile_size.pmax
    out = nl.ndarray((seqlen, dim), dtype=x.dtype, buffer=nl.shared_hbm)
    w_row = nl.load(weight.reshape((1, dim)))
    w_all = w_row.broadcast_to((pmax, dim))
    bias_placeholder = nl.zeros((pmax, 1), dtype=nl.float32)
    ip, jf = nl.mgrid[0:pmax, 0:dim]
    for i in nl.affine_range((seqlen + pmax - 1) // pmax):
        live = i * pmax + ip < seqlen
        tile = nl.load(x[i * pmax + ip, jf], mask=live)
        square_sum = nl.ndarray((pmax, 1), dtype=nl.float32)
        act = nl.ndarray((pmax, dim), dtype=nl.float32)
        act[...] = nisa.activation_reduce(op=nl.square, data=tile, reduce_op=np.add,
                                          reduce_res=square_sum[...], bias=bias_placeholder[...],
                                          mask=live)
        square_sum[...] = nisa.tensor_scalar(square_sum[...], np.multiply, 1.0 / dim, op1=np.add,
                                             operand1=eps, mask=live)
        square_sum[...] = nisa.activation(op=nl.rsqrt, data=square_sum[...], mask=live)
        scaled = nisa.tensor_scalar(tile, np.multiply, square_sum, mask=live)
        nl.store(out[i * pmax + ip, jf], value=nl.multiply(scaled, w_all, mask=live), mask=live)
    return out


KERNEL = rmsnorm_act_reduce
TOLERANCE = {"rtol": 2e-5, "atol": 1e-6}


def make_inputs(rng):
    return (rng.normal(size=(200, 64)).astype(np.float32), rng.normal(size=(64,)).astype(np.float32), 1e-6)


def reference(x, w, eps):
    x64 = x.astype(np.float64)
    return (x64 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + eps) * w).astype(np.float32)
