"""A [3, 2] launch grid over a [3, 2, 1, 5] tensor of blocks: program (i, j) negates block
(i, j) and writes it to block (j, i) of a [2, 3, 1, 5] output (a transpose of the block grid).

Covers: a 2-d SPMD grid (`kernel[3, 2]`), nl.program_id(0) and nl.program_id(1) as integer
indices into 4-d HBM tensors, nl.negative, nl.store of a block into a different grid cell."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def block_transpose_negate(blocks):
    gi, gj, rows, cols = blocks.shape
    swapped = nl.ndarray((gj, gi, rows, cols), dtype=blocks.dtype, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(1)
    cell = nl.load(blocks[i, j])
    nl.store(swapped[j, i], nl.negative(cell))
    return swapped


KERNEL = block_transpose_negate[3, 2]


def make_inputs(rng):
    return (rng.normal(size=(3, 2, 1, 5)).astype(np.float32),)


def reference(blocks):
    return -blocks.transpose(1, 0, 2, 3)
