"""RoPE over a [d_head, S] tile as a benchmark-suite kernel writes it: a plain helper
function operating on SBUF views of the upper / lower partition halves (the lower half
starts at partition 64), tile-returning nisa.tensor_tensor with numpy ufuncs assigned into
those views, nl.program_ndim() guarding an optional SPMD split.
SOURCE: ucb-bar/autocomp sols/trn-advanced/3_rope_ref.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def rope(x_in, cos, sin, lnc_shard=False):
    def rope_sbuf(x_sb, cos_sb, sin_sb, out_sb):
        d_head, seq = x_sb.shape
        i_upper = nl.arange(d_head // 2)[:, None]
        i_lower = i_upper + d_head // 2
        i_s = nl.arange(seq)[None, :]
        even = x_sb[i_upper, i_s]
        odd = x_sb[i_lower, i_s]
        e_cos = nisa.tensor_tensor(even, cos_sb, np.multiply)
        o_cos = nisa.tensor_tensor(odd, cos_sb, np.multiply)
        e_sin = nisa.tensor_tensor(even, sin_sb, np.multiply)
        o_sin = nisa.tensor_tensor(odd, sin_sb, np.multiply)
        out_sb[i_upper, i_s] = nisa.tensor_tensor(e_cos, o_sin, np.subtract)
        out_sb[i_lower, i_s] = nisa.tensor_tensor(o_cos, e_sin, np.add)

    d_head, seq = x_in.shape
    assert d_head <= 128 and tuple(cos.shape) == (d_head // 2, seq)
    x_out = nl.ndarray((d_head, seq), dtype=x_in.dtype, buffer=nl.hbm)
    n_prgs, prg_id = 1, 0
    if lnc_shard and nl.program_ndim() != 0:
        n_prgs, prg_id = nl.num_programs(axes=0), nl.program_id(axis=0)
    tile_s = seq // n_prgs
    offset = tile_s * prg_id
    i_upper = nl.arange(d_head // 2)[:, None]
    i_dh = nl.arange(d_head)[:, None]
    i_s = nl.arange(tile_s)[None, :]
    x_sb = nl.ndarray((d_head, tile_s), dtype=x_in.dtype, buffer=nl.sbuf)
    x_sb[i_dh, i_s] = nl.load(x_in[i_dh, i_s + offset])
    cos_sb = nl.ndarray((d_head // 2, tile_s), dtype=x_in.dtype, buffer=nl.sbuf)
    sin_sb = nl.ndarray((d_head // 2, tile_s), dtype=x_in.dtype, buffer=nl.sbuf)
    cos_sb[...] = nl.load(cos[i_upper, i_s + offset])
    sin_sb[...] = nl.load(sin[i_upper, i_s + offset])
    out_sb = nl.ndarray((d_head, tile_s), dtype=x_in.dtype, buffer=nl.sbuf)
    rope_sbuf(x_sb, cos_sb, sin_sb, out_sb)
    nl.store(x_out[i_dh, i_s + offset], out_sb)
    return x_out


KERNEL = rope
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def make_inputs(rng):
    d_head, seq = 128, 96
    angles = np.arange(seq)[None, :] / (10000 ** (np.arange(d_head // 2)[:, None] / (d_head // 2)))
    return (rng.normal(size=(d_head, seq)).astype(np.float32), np.cos(angles).astype(np.float32),
            np.sin(angles).astype(np.float32))


def reference(x, cos, sin):
    half = x.shape[0] // 2
    even, odd = x[:half], x[half:]
    return np.concatenate([even * cos - odd * sin, odd * cos + even * sin]).astype(np.float32)
