"""LayerNorm with the tile-level API: nl.mean, var = mean(x^2) - mean^2, rsqrt(var + eps),
gamma / beta rows broadcast to 128 partitions; epsilon is a compile-time constant argument.
SOURCE: aws-neuron/nki-samples src/nki_samples/tutorials/layernorm/layernorm_nki_kernel.py"""
import math

import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def layernorm(input_tensor, epsilon, gamma_vector, beta_vector):
    out = nl.ndarray(input_tensor.shape, dtype=input_tensor.dtype, buffer=nl.shared_hbm)
    n_rows, width = input_tensor.shape
    assert width == gamma_vector.shape[0] == beta_vector.shape[0]
    i_p, i_f, i_one = nl.mgrid[0:nl.tile_size.pmax, 0:width, 0:1]
    gamma = nl.load(gamma_vector.reshape((1, width))[i_one, i_f])
    beta = nl.load(beta_vector.reshape((1, width))[i_one, i_f])
    gamma_all = gamma.broadcast_to((nl.tile_size.pmax, width))
    beta_all = beta.broadcast_to((nl.tile_size.pmax, width))
    for t in nl.affine_range(math.ceil(n_rows / nl.tile_size.pmax)):
        live = t * nl.tile_size.pmax + i_p < n_rows
        x = nl.load(input_tensor[t * nl.tile_size.pmax + i_p, i_f], mask=live)
        mean = nl.mean(x, axis=1)
        var = nl.mean(nl.square(x), axis=1) - mean * mean
        normed = (x - mean) * nl.rsqrt(var + epsilon)
        y = normed * gamma_all + beta_all
        nl.store(out[t * nl.tile_size.pmax + i_p, i_f], value=y, mask=live)
    return out


KERNEL = layernorm
TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}


def make_inputs(rng):
    return (rng.normal(2.0, 1.5, size=(160, 96)).astype(np.float32), 1e-5,
            rng.normal(size=(96,)).astype(np.float32), rng.normal(size=(96,)).astype(np.float32))


def reference(x, eps, gamma, beta):
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = x64.var(axis=1, keepdims=True)
    return ((x64 - mean) / np.sqrt(var + eps) * gamma + beta).astype(np.float32)
