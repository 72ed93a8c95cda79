"""Rotary position embedding: a [batch, heads] launch grid, a helper @nki.jit kernel called
from the kernel (traced inline) writing a [2, par_dim, D] SBUF tensor, half-rotations with
negation, masked partial sequence tiles.
SOURCE: aws-neuron/nki-samples src/nki_samples/tutorials/rotary/rotary_nki_kernels.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def rotate_core(q_tile, k_tile, cos_tile, sin_tile, output_tile):
    half = q_tile.shape[-1] // 2
    for slot, x in ((0, q_tile), (1, k_tile)):
        output_tile[slot, :, :] = x * cos_tile
        output_tile[slot, :, :half] = output_tile[slot, :, :half] + (-1 * x[:, half:] * sin_tile[:, :half])
        output_tile[slot, :, half:] = output_tile[slot, :, half:] + (x[:, :half] * sin_tile[:, half:])


@nki.jit
def rotary(q, k, cos, sin):
    assert q.shape == k.shape and cos.shape == sin.shape and q.shape[-1] <= 128
    batch_id = nl.program_id(axis=0)
    head_id = nl.program_id(axis=1)
    seq = q.shape[2]
    output = nl.ndarray([2] + list(q.shape), dtype=q.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(q.shape[-1])[None, :]
    for sb in nl.affine_range(0, (seq + 127) // 128):
        rows = sb * nl.tile_size.pmax + i_p
        live = rows < seq
        q_tile = nl.load(q[batch_id, head_id][rows, i_f], mask=live)
        k_tile = nl.load(k[batch_id, head_id][rows, i_f], mask=live)
        out_tile = nl.ndarray([2] + [nl.par_dim(k_tile.shape[0]), k_tile.shape[1]], dtype=k_tile.dtype,
                              buffer=nl.sbuf)
        cos_tile = nl.load(cos[batch_id][rows, i_f], mask=live)
        sin_tile = nl.load(sin[batch_id][rows, i_f], mask=live)
        rotate_core(q_tile, k_tile, cos_tile, sin_tile, out_tile)
        nl.store(output[0, batch_id, head_id][rows, i_f], out_tile[0, :, :], mask=live)
        nl.store(output[1, batch_id, head_id][rows, i_f], out_tile[1, :, :], mask=live)
    return output


KERNEL = rotary[2, 2]
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def make_inputs(rng):
    batch, heads, seq, dim = 2, 2, 160, 32
    pos = np.arange(seq)[None, :, None].astype(np.float64)
    inv = 1.0 / (10000 ** (np.arange(0, dim, 2) / dim))
    freqs = np.concatenate([pos * inv, pos * inv], axis=-1).repeat(batch, axis=0)
    return (rng.normal(size=(batch, heads, seq, dim)).astype(np.float32),
            rng.normal(size=(batch, heads, seq, dim)).astype(np.float32),
            np.cos(freqs).astype(np.float32), np.sin(freqs).astype(np.float32))


def reference(q, k, cos, sin):
    def rotate_half(x):
        half = x.shape[-1] // 2
        return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    c, s = cos[:, None], sin[:, None]
    return np.stack([q * c + rotate_half(q) * s, k * c + rotate_half(k) * s]).astype(np.float32)
