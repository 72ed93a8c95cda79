"""Mean over non-overlapping [2, 4] windows of a float16 [3, 8, 12] tensor through an explicit
access pattern: a 5-d .ap() view of the SBUF tile puts each window in the last two dims,
nl.sum reduces them and a dst= tensor_scalar scales by 1/8.

Covers: nisa.dma_copy HBM -> SBUF and SBUF -> HBM, tile.ap([[step, count], ...]) with five
[step, count] pairs, nl.sum(axis=[3, 4]) of an access-pattern view, nl.ndarray(sums.shape,
dtype=sums.dtype) from a tile's attributes, nisa.tensor_scalar(dst=, data=, op0=, operand0=
float), float16 data."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def window_mean(image, wh, ww):
    chans, height, width = image.shape
    means = nl.ndarray((chans, height // wh, width // ww), dtype=image.dtype, buffer=nl.shared_hbm)
    staged = nl.ndarray(image.shape, dtype=image.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=staged, src=image)
    view = staged.ap([
        [height * width, chans],
        [wh * width, height // wh],
        [ww, width // ww],
        [width, wh],
        [1, ww],
    ])
    sums = nl.sum(view, axis=[3, 4])
    scaled = nl.ndarray(sums.shape, dtype=sums.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=scaled, data=sums, op0=nl.multiply, operand0=1.0 / (wh * ww))
    nisa.dma_copy(dst=means, src=scaled)
    return means


KERNEL = window_mean
TOLERANCE = {"rtol": 1e-3, "atol": 1e-3}


def make_inputs(rng):
    return ((np.arange(3 * 8 * 12, dtype=np.float16).reshape(3, 8, 12) - 150) * np.float16(0.5), 2, 4)


def reference(image, wh, ww):
    c, h, w = image.shape
    return image.astype(np.float64).reshape(c, h // wh, wh, w // ww, ww).mean(axis=(2, 4)).astype(np.float16)
