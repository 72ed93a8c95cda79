"""(a + b) * b over [192, 768] tensors in [64, 256] tiles with explicit SBUF buffers, DMA
copies and dst= tensor_tensor calls.

Covers: @nki.jit(platform_target="trn1"), nested nl.affine_range, nl.ndarray(shape=, dtype=,
buffer=nl.sbuf) tiles, a window built as a tuple of slice objects and used to index HBM
tensors, nisa.dma_copy(dst=, src=) both ways, nisa.tensor_tensor(dst=, data1=, data2=, op=)
with nl.add and nl.multiply."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(platform_target="trn1")
def sum_times_second(a_hbm, b_hbm):
    out = nl.ndarray(a_hbm.shape, dtype=a_hbm.dtype, buffer=nl.shared_hbm)
    rows, cols = a_hbm.shape
    th, tw = 64, 256
    assert rows % th == 0 and cols % tw == 0
    for bi in nl.affine_range(rows // th):
        for bj in nl.affine_range(cols // tw):
            window = (slice(bi * th, bi * th + th), slice(bj * tw, bj * tw + tw))
            a_sb = nl.ndarray(shape=(th, tw), dtype=a_hbm.dtype, buffer=nl.sbuf)
            b_sb = nl.ndarray(shape=(th, tw), dtype=b_hbm.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a_sb, src=a_hbm[window])
            nisa.dma_copy(dst=b_sb, src=b_hbm[window])
            summed = nl.ndarray(shape=(th, tw), dtype=a_hbm.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=summed, data1=a_sb, data2=b_sb, op=nl.add)
            nisa.tensor_tensor(dst=summed, data1=summed, data2=b_sb, op=nl.multiply)
            nisa.dma_copy(dst=out[window], src=summed)
    return out


KERNEL = sum_times_second
TOLERANCE = {"rtol": 1e-6, "atol": 1e-6}


def make_inputs(rng):
    return (rng.normal(size=(192, 768)).astype(np.float32), rng.normal(size=(192, 768)).astype(np.float32))


def reference(a, b):
    return (a + b) * b
