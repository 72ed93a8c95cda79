"""Block addition over a [n, 8, 128, 512] tensor: nl.program_id selects the block, an
affine_range walks its 8 tiles, and every load / add / store carries a mask on the flat
element offset (all true here: the tensor holds whole blocks).
SOURCE: aws-neuron/nki-samples src/nki_samples/reference/tutorial.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def add_blocks(a_ptr, b_ptr, n_elements):
    c_ptr = nl.ndarray(a_ptr.shape, dtype=a_ptr.dtype, buffer=nl.shared_hbm)
    ix, iy = nl.mgrid[0:128, 0:512]
    tile_size = 128 * 512
    block_size = 8 * tile_size
    j = nl.program_id(axis=0)
    for i in nl.affine_range(8):
        offset = j * block_size + i * tile_size + 512 * ix + iy
        a = nl.load(a_ptr[j, i, ix, iy], mask=offset < n_elements)
        b = nl.load(b_ptr[j, i, ix, iy], mask=offset < n_elements)
        c = nl.add(a, b, mask=offset < n_elements)
        nl.store(c_ptr[j, i, ix, iy], value=c, mask=offset < n_elements)
    return c_ptr


KERNEL = add_blocks[2]


def make_inputs(rng):
    shape = (2, 8, 128, 512)
    return (rng.normal(size=shape).astype(np.float32), rng.normal(size=shape).astype(np.float32),
            2 * 8 * 128 * 512)


def reference(a, b, n):
    return a + b
