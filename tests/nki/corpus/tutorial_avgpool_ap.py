"""2-d average pooling via an explicit access pattern: a 5-d .ap() view of a [C, H, W] tile
groups each pool window in the last two dims, nl.sum reduces them, tensor_scalar scales.
SOURCE: aws-neuron/nki-samples src/nki_samples/tutorials/average_pool2d/average_pool2d_nki_kernels.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def avgpool(in_tensor, pool_size):
    channels, height, width = in_tensor.shape
    out = nl.ndarray((channels, height // pool_size, width // pool_size), dtype=in_tensor.dtype,
                     buffer=nl.shared_hbm)
    tile = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=in_tensor)
    windows = tile.ap([
        [height * width, channels],
        [pool_size * width, height // pool_size],
        [pool_size, width // pool_size],
        [width, pool_size],
        [1, pool_size],
    ])
    sums = nl.sum(windows, axis=[3, 4])
    scaled = nl.ndarray(sums.shape, dtype=sums.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=scaled, data=sums, op0=nl.multiply, operand0=1.0 / (pool_size * pool_size))
    nisa.dma_copy(dst=out, src=scaled)
    return out


KERNEL = avgpool
TOLERANCE = {"rtol": 1e-3, "atol": 1e-3}


def make_inputs(rng):
    return (np.arange(4 * 6 * 8, dtype=np.float16).reshape(4, 6, 8) - 90, 2)


def reference(x, pool):
    c, h, w = x.shape
    windows = x.astype(np.float64).reshape(c, h // pool, pool, w // pool, pool)
    return windows.mean(axis=(2, 4)).astype(np.float16)
