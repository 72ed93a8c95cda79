"""An embedding lookup: rows of a table gathered by token ids with an indirect DMA.

out[t, :] = table[ids[t], :] * scale for T token ids (T a multiple of 128): each block of
128 ids is loaded into an int32 [128, 1] SBUF tile, `nl.load(table[id_tile, :])` gathers
one table row per partition (an indirect DMA from HBM), the Scalar Engine scales the rows
and they are stored in token order. Ids outside the table are an error (oob_mode error).
"""

import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def embedding_gather(table, ids, scale=2.0):
    tokens = ids.shape[0]
    dim = table.shape[1]
    out = nl.ndarray((tokens, dim), dtype=table.dtype, buffer=nl.shared_hbm)
    for block in nl.affine_range(tokens // 128):
        id_tile = nl.load(ids[block * 128:(block + 1) * 128, :])
        rows = nl.load(table[id_tile, :])
        scaled = nl.ndarray((128, dim), dtype=table.dtype, buffer=nl.sbuf)
        nisa.activation(dst=scaled, op=nl.copy, data=rows, scale=scale)
        nl.store(out[block * 128:(block + 1) * 128, :], value=scaled)
    return out


KERNEL = embedding_gather
TOLERANCE = {"rtol": 0.0, "atol": 0.0}


def make_inputs(rng):
    table = rng.normal(0.0, 1.0, size=(1000, 64)).astype(np.float32)
    ids = rng.integers(0, 1000, size=(256, 1)).astype(np.int32)
    ids[:3, 0] = [0, 999, 0]    # the first and last rows, and a repeated id
    return (table, ids)


def reference(table, ids, scale=2.0):
    return (table[ids[:, 0]] * np.float32(scale)).astype(np.float32)
