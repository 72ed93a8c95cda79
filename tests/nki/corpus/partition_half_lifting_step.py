"""One lifting step between the two partition halves of a [D, S] tile: with top = rows
0:D/2 and bottom = rows D/2:D, top' = top + bottom * g and bottom' = bottom - top' * g for a
[D/2, S] coefficient tile g (D = 128: an access of 64 partitions starts at partition 0 or
64). The column range may be split across an SPMD grid when `split=True` and the kernel is
launched on one.

Covers: a plain (not @nki.jit) Python helper defined inside the kernel and working on SBUF
views `t[i_half, i_s]` / `t[i_half + D/2, i_s]`, tile-returning nisa.tensor_tensor(a, b, ufunc)
positionally with np.multiply / np.add / np.subtract, assignment into partition-offset views of
an SBUF tile, nl.program_ndim(), nl.num_programs(axes=0), nl.program_id(axis=0), a bool kernel
argument with a default (GRID_VARIANT runs it split over a 2-program grid), buffer=nl.hbm
output, loads and stores at a column offset `i_s + offset`."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def lifting_step(signal, coeff, split=False):
    def lift(sig_sb, g_sb, res_sb):
        depth, span = sig_sb.shape
        i_half = nl.arange(depth // 2)[:, None]
        i_cols = nl.arange(span)[None, :]
        top = sig_sb[i_half, i_cols]
        bottom = sig_sb[i_half + depth // 2, i_cols]
        new_top = nisa.tensor_tensor(top, nisa.tensor_tensor(bottom, g_sb, np.multiply), np.add)
        res_sb[i_half, i_cols] = new_top
        res_sb[i_half + depth // 2, i_cols] = nisa.tensor_tensor(
            bottom, nisa.tensor_tensor(new_top, g_sb, np.multiply), np.subtract)

    depth, span = signal.shape
    assert depth <= 128 and depth % 2 == 0 and tuple(coeff.shape) == (depth // 2, span)
    lifted = nl.ndarray((depth, span), dtype=signal.dtype, buffer=nl.hbm)
    parts, part = 1, 0
    if split and nl.program_ndim() != 0:
        parts, part = nl.num_programs(axes=0), nl.program_id(axis=0)
    width = span // parts
    offset = width * part
    i_d = nl.arange(depth)[:, None]
    i_h = nl.arange(depth // 2)[:, None]
    i_s = nl.arange(width)[None, :]
    sig_sb = nl.ndarray((depth, width), dtype=signal.dtype, buffer=nl.sbuf)
    sig_sb[i_d, i_s] = nl.load(signal[i_d, i_s + offset])
    g_sb = nl.ndarray((depth // 2, width), dtype=signal.dtype, buffer=nl.sbuf)
    g_sb[...] = nl.load(coeff[i_h, i_s + offset])
    res_sb = nl.ndarray((depth, width), dtype=signal.dtype, buffer=nl.sbuf)
    lift(sig_sb, g_sb, res_sb)
    nl.store(lifted[i_d, i_s + offset], res_sb)
    return lifted


KERNEL = lifting_step
GRID_VARIANT = (lifting_step[2], {"split": True})     # two programs, 40 columns each
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def make_inputs(rng):
    return (rng.normal(size=(128, 80)).astype(np.float32),
            rng.uniform(-1, 1, size=(64, 80)).astype(np.float32))


def reference(signal, coeff):
    half = signal.shape[0] // 2
    top, bottom = signal[:half].astype(np.float64), signal[half:].astype(np.float64)
    new_top = top + bottom * coeff
    return np.concatenate([new_top, bottom - new_top * coeff]).astype(np.float32)
