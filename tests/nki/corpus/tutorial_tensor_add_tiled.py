"""Tiled tensor addition with explicit SBUF tiles, dma_copy and tensor_tensor (NKI 2.x form).
SOURCE: aws-neuron/aws-neuron-sdk nki/examples/tensor_addition/tensor_addition_nki_kernels.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(platform_target="trn1")
def tensor_add(a_input, b_input):
    out = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    rows, cols = a_input.shape
    tile_m, tile_n = 128, 512
    assert rows % tile_m == 0 and cols % tile_n == 0
    for m in nl.affine_range(rows // tile_m):
        for n in nl.affine_range(cols // tile_n):
            a_tile = nl.ndarray(shape=(tile_m, tile_n), dtype=a_input.dtype, buffer=nl.sbuf)
            b_tile = nl.ndarray(shape=(tile_m, tile_n), dtype=b_input.dtype, buffer=nl.sbuf)
            window = (slice(m * tile_m, (m + 1) * tile_m), slice(n * tile_n, (n + 1) * tile_n))
            nisa.dma_copy(dst=a_tile, src=a_input[window])
            nisa.dma_copy(dst=b_tile, src=b_input[window])
            c_tile = nl.ndarray(shape=(tile_m, tile_n), dtype=a_input.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=c_tile, data1=a_tile, data2=b_tile, op=nl.add)
            nisa.dma_copy(dst=out[window], src=c_tile)
    return out


KERNEL = tensor_add


def make_inputs(rng):
    return (rng.normal(size=(256, 1024)).astype(np.float32),
            rng.normal(size=(256, 1024)).astype(np.float32))


def reference(a, b):
    return a + b
