"""Palindromic block sum over the 256-wide column blocks of a [128, 1024] tensor (output
block i is input block i plus input block 3 - i), and double a [64, 96] tensor addressed
through the named axes of an nl.mgrid.

Covers: native slices with loop-dependent bounds `t[:, a:b]` on load, nl.ds(start, size) on
load and store, nl.affine_range over column blocks, an nl.mgrid grid used through
`grid.p` / `grid.x`, tile arithmetic with operators (`a + b`, `tile * 2.0`)."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def palindromic_blocks(wide, small):
    width = 256
    n_blocks = wide.shape[1] // width
    folded = nl.ndarray(wide.shape, dtype=wide.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(n_blocks):
        src = n_blocks - 1 - i
        mirror = nl.load(wide[:, src * width:(src + 1) * width])
        own = nl.load(wide[:, nl.ds(i * width, width)])
        nl.store(folded[:, nl.ds(i * width, width)], mirror + own)
    doubled = nl.ndarray(small.shape, dtype=small.dtype, buffer=nl.shared_hbm)
    grid = nl.mgrid[0:64, 0:96]
    nl.store(doubled[grid.p, grid.x], nl.load(small[grid.p, grid.x]) * 2.0)
    return folded, doubled


KERNEL = palindromic_blocks


def make_inputs(rng):
    return (rng.normal(size=(128, 1024)).astype(np.float32), rng.normal(size=(64, 96)).astype(np.float32))


def reference(wide, small):
    blocks = np.split(wide, 4, axis=1)
    return np.concatenate([x + y for x, y in zip(blocks, blocks[::-1])], axis=1), small * np.float32(2.0)
