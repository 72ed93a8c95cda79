"""Complex multiply by a per-position phase, with the phase conjugated on the upper half of the
columns: for z = re + i*im and phase (c, s), the lower columns get z * (c + i s) and the upper
columns z * (c - i s). A [batch, heads] launch grid; sequences of 150 rows in 128-row tiles
with a masked partial last tile; a helper @nki.jit kernel, traced inline, writes the real and
imaginary parts into slots 0 / 1 of a [2, par_dim, D] SBUF tensor.

Covers: a 2-d grid with nl.program_id(axis=0) / nl.program_id(axis=1), chained HBM indexing
`t[b, h][rows, i_f]`, nl.affine_range(0, n) with a start argument, nl.ndarray with a list
shape `[2] + [nl.par_dim(P), D]`, a helper @nki.jit called from the kernel and writing into
its argument through `out[slot, :, :]`, `out[slot, :, :half]` and `out[slot, :, half:]`,
tile slices `x[:, :half]`, `-1 * tile` negation, tile operators, masked loads and stores of
slot views `out[k, :, :]`, an HBM output with a leading extra dim (`[2] + list(shape)`)."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def phase_rotate(re_tile, im_tile, cos_tile, sin_tile, parts):
    half = re_tile.shape[-1] // 2
    parts[0, :, :] = re_tile * cos_tile
    parts[1, :, :] = im_tile * cos_tile
    parts[0, :, :half] = parts[0, :, :half] + (-1 * im_tile[:, :half] * sin_tile[:, :half])
    parts[1, :, :half] = parts[1, :, :half] + re_tile[:, :half] * sin_tile[:, :half]
    parts[0, :, half:] = parts[0, :, half:] + im_tile[:, half:] * sin_tile[:, half:]
    parts[1, :, half:] = parts[1, :, half:] + (-1 * re_tile[:, half:] * sin_tile[:, half:])


@nki.jit
def complex_phase(re, im, cos, sin):
    assert re.shape == im.shape and cos.shape == sin.shape and re.shape[-1] <= 128
    b = nl.program_id(axis=0)
    h = nl.program_id(axis=1)
    seq, width = re.shape[2], re.shape[3]
    product = nl.ndarray([2] + list(re.shape), dtype=re.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(width)[None, :]
    for blk in nl.affine_range(0, (seq + 127) // 128):
        rows = blk * nl.tile_size.pmax + i_p
        live = rows < seq
        re_tile = nl.load(re[b, h][rows, i_f], mask=live)
        im_tile = nl.load(im[b, h][rows, i_f], mask=live)
        cos_tile = nl.load(cos[b][rows, i_f], mask=live)
        sin_tile = nl.load(sin[b][rows, i_f], mask=live)
        parts = nl.ndarray([2] + [nl.par_dim(re_tile.shape[0]), re_tile.shape[1]], dtype=re_tile.dtype,
                           buffer=nl.sbuf)
        phase_rotate(re_tile, im_tile, cos_tile, sin_tile, parts)
        for k in range(2):
            nl.store(product[k, b, h][rows, i_f], parts[k, :, :], mask=live)
    return product


KERNEL = complex_phase[2, 3]
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def make_inputs(rng):
    batch, heads, seq, width = 2, 3, 150, 24
    theta = rng.uniform(-np.pi, np.pi, size=(batch, seq, width))
    return (rng.normal(size=(batch, heads, seq, width)).astype(np.float32),
            rng.normal(size=(batch, heads, seq, width)).astype(np.float32),
            np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32))


def reference(re, im, cos, sin):
    half = re.shape[-1] // 2
    z = re.astype(np.float64) + 1j * im.astype(np.float64)
    s = sin.astype(np.float64).copy()
    s[..., half:] *= -1.0
    w = (z * (cos.astype(np.float64) + 1j * s)[:, None])
    return np.stack([w.real, w.imag]).astype(np.float32)
