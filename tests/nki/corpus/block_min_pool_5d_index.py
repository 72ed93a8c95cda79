"""Minimum over non-overlapping rectangular [rh, rw] blocks of a [C, H, W] tensor, the blocks
addressed by 5-d nl.arange index expressions.

Covers: an SBUF tile declared with nl.ndarray (default buffer) and filled by
`tile[:, :, :] = nl.load(...)`, 3-d and 5-d nl.arange broadcasts, a tile read through the
affine expressions `rh * by + ry` / `rw * bx + rx`, nl.min over the non-trailing axes [2, 4],
two integer (compile-time) kernel arguments, nl.store(value=)."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def block_min(volume, rh, rw):
    chans, height, width = volume.shape
    out_h, out_w = height // rh, width // rw
    mins = nl.ndarray((chans, out_h, out_w), dtype=volume.dtype, buffer=nl.shared_hbm)
    c_all = nl.arange(chans)[:, None, None]
    h_all = nl.arange(height)[None, :, None]
    w_all = nl.arange(width)[None, None, :]
    staged = nl.ndarray([chans, height, width], dtype=volume.dtype)
    staged[:, :, :] = nl.load(volume[c_all, h_all, w_all])
    c5 = nl.arange(chans)[:, None, None, None, None]
    by = nl.arange(out_h)[None, :, None, None, None]
    ry = nl.arange(rh)[None, None, :, None, None]
    bx = nl.arange(out_w)[None, None, None, :, None]
    rx = nl.arange(rw)[None, None, None, None, :]
    smallest = nl.min(staged[c5, rh * by + ry, rw * bx + rx], axis=[2, 4])
    oy = nl.arange(out_h)[None, :, None]
    ox = nl.arange(out_w)[None, None, :]
    nl.store(mins[c_all, oy, ox], value=smallest)
    return mins


KERNEL = block_min


def make_inputs(rng):
    return (rng.normal(size=(5, 8, 12)).astype(np.float32), 2, 4)


def reference(volume, rh, rw):
    c, h, w = volume.shape
    return volume.reshape(c, h // rh, rh, w // rw, rw).min(axis=(2, 4))
