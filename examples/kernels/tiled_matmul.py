"""A tiled matmul on the Tensor Engine: bf16 in, float32 out, PSUM accumulation over K.

out[M, N] = lhsT[K, M].T @ rhs[K, N] with K a multiple of 128 (the contraction runs in
128-row steps, each nc_matmul adding into the same PSUM tile: `accumulate=(k > 0)`),
M in 128-row blocks (the stationary free size) and N in 512-column blocks (one PSUM bank
of float32). The PSUM tile is drained to SBUF by the Vector Engine and stored.
"""

import ml_dtypes
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512


@nki.jit
def tiled_matmul(lhsT, rhs):
    k_size, m_size = lhsT.shape
    _, n_size = rhs.shape
    out = nl.ndarray((m_size, n_size), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(m_size // TILE_M):
        for n in nl.affine_range(n_size // TILE_N):
            acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.sequential_range(k_size // TILE_K):
                stationary = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                moving = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=stationary, src=lhsT[k * TILE_K:(k + 1) * TILE_K,
                                                       m * TILE_M:(m + 1) * TILE_M])
                nisa.dma_copy(dst=moving, src=rhs[k * TILE_K:(k + 1) * TILE_K,
                                                  n * TILE_N:(n + 1) * TILE_N])
                nisa.nc_matmul(dst=acc, stationary=stationary, moving=moving, accumulate=(k > 0))
            result = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=result, src=acc)
            nisa.dma_copy(dst=out[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N],
                          src=result)
    return out


KERNEL = tiled_matmul
TOLERANCE = {"rtol": 1e-5, "atol": 1e-4}
# simulator vs KLR interpreter: both sum the 384 products in float32, in different orders
# (partition by partition / numpy's blocked BLAS): about sqrt(384) roundings of sums of
# magnitude ~20 apart (6e-6 seen), far inside the float32 bound 384 * 2^-24 * sum |a b|
BACKENDS_TOLERANCE = {"rtol": 1e-5, "atol": 5e-5}


def make_inputs(rng):
    lhsT = rng.normal(0.0, 1.0, size=(384, 256)).astype(ml_dtypes.bfloat16)
    rhs = rng.normal(0.0, 1.0, size=(384, 1024)).astype(ml_dtypes.bfloat16)
    return (lhsT, rhs)


def reference(lhsT, rhs):
    return (lhsT.astype(np.float64).T @ rhs.astype(np.float64)).astype(np.float32)
