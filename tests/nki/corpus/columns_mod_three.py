"""De-interleave the columns of a [6, 11] tensor by residue modulo 3 into three outputs of
ceil / floor widths, by strided index expressions into an SBUF tile (copies on chip).

Covers: nl.arange partition / free indices, strided free indices `3 * j`, `3 * j + 1`,
`3 * j + 2` applied to an on-chip tile, a host-side assert on the tile size, several returned
HBM tensors of different widths."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def split_mod3(packed):
    rows, cols = packed.shape
    widths = [(cols - r + 2) // 3 for r in range(3)]
    assert rows <= nl.tile_size.pmax and sum(widths) == cols
    outs = [nl.ndarray((rows, w), dtype=packed.dtype, buffer=nl.shared_hbm) for w in widths]
    r_idx = nl.arange(rows)[:, None]
    staged = nl.load(packed[r_idx, nl.arange(cols)[None, :]])
    for residue in range(3):
        j = nl.arange(widths[residue])[None, :]
        nl.store(outs[residue][r_idx, j], value=staged[r_idx, 3 * j + residue])
    return outs[0], outs[1], outs[2]


KERNEL = split_mod3


def make_inputs(rng):
    return ((np.arange(6 * 11, dtype=np.float32).reshape(6, 11) - 30.0) * 0.75,)


def reference(packed):
    return packed[:, 0::3].copy(), packed[:, 1::3].copy(), packed[:, 2::3].copy()
