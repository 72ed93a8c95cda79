"""Clamp from below at -1, shift each row by its own offset, and round to bfloat16, with
every intermediate in a pre-declared [par_dim(P), F] SBUF tile.

Covers: nl.ndarray((par_dim(P), F), buffer=nl.sbuf) tiles written with `t[...] = ...`,
nl.maximum(tile, nl.float32(-1.0)) with a typed scalar, tile-returning nisa.tensor_scalar(
data=, op0=nl.add, operand0=<[P, 1] column>, dtype=), nl.copy(tile, dtype=nl.bfloat16) for the
down-cast, a bfloat16 HBM output."""
import ml_dtypes
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki.language import par_dim


@nki.jit
def floor_clamp_offset(scores, offsets):
    rows, cols = scores.shape
    out = nl.ndarray((rows, cols), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    raw = nl.load(scores)
    shift = nl.load(offsets)
    floored = nl.ndarray((par_dim(rows), cols), dtype=nl.float32, buffer=nl.sbuf)
    floored[...] = nl.maximum(raw, nl.float32(-1.0))
    moved = nl.ndarray((par_dim(rows), cols), dtype=nl.float32, buffer=nl.sbuf)
    moved[...] = nisa.tensor_scalar(data=floored, op0=nl.add, operand0=shift, dtype=nl.float32)
    narrow = nl.ndarray((par_dim(rows), cols), dtype=nl.bfloat16, buffer=nl.sbuf)
    narrow[...] = nl.copy(moved, dtype=nl.bfloat16)
    nl.store(out, narrow)
    return out


KERNEL = floor_clamp_offset
TOLERANCE = {"rtol": 1e-2, "atol": 1e-6}


def make_inputs(rng):
    return (rng.normal(0, 2, size=(48, 130)).astype(np.float32), rng.normal(size=(48, 1)).astype(np.float32))


def reference(scores, offsets):
    return (np.maximum(scores, -1.0) + offsets).astype(ml_dtypes.bfloat16)
