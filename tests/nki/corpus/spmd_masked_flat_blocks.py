"""a + b * b over a [3, 4, 64, 128] tensor: program j of a 1-d grid owns super-block j, an
affine_range walks its 4 tiles, and every load / compute / store is masked by the flat element
offset against a count argument (here equal to the size, so nothing is cut).

Covers: nl.program_id(axis=0) in a `kernel[3]` launch, 4-d HBM indexing `t[j, i, p, f]` with
unpacked mgrid indices, a mask from an affine expression of program id, loop variable and
indices compared with an integer argument, masked nl.multiply / nl.add and masked load / store."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def masked_flat(a_hbm, b_hbm, count):
    _, tiles, rows, cols = a_hbm.shape
    out = nl.ndarray(a_hbm.shape, dtype=a_hbm.dtype, buffer=nl.shared_hbm)
    p, f = nl.mgrid[0:rows, 0:cols]
    j = nl.program_id(axis=0)
    for i in nl.affine_range(tiles):
        flat = (j * tiles + i) * rows * cols + cols * p + f
        keep = flat < count
        a = nl.load(a_hbm[j, i, p, f], mask=keep)
        b = nl.load(b_hbm[j, i, p, f], mask=keep)
        total = nl.add(a, nl.multiply(b, b, mask=keep), mask=keep)
        nl.store(out[j, i, p, f], value=total, mask=keep)
    return out


KERNEL = masked_flat[3]


def make_inputs(rng):
    shape = (3, 4, 64, 128)
    return (rng.normal(size=shape).astype(np.float32), rng.normal(size=shape).astype(np.float32),
            3 * 4 * 64 * 128)


def reference(a, b, count):
    return a + b * b
