"""nl.ds and nl.mgrid docstring examples: column blocks loaded with native slices and with
nl.ds(start, size), and a copy indexed through `grid.p` / `grid.x` of an nl.mgrid.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_nl_dslice.py and
general/nki/test/test_nki_nl_mgrid.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def dslice_mgrid(in_tensor, small_tensor):
    out = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(in_tensor.shape[1] // 512):
        tile = nl.load(in_tensor[:, (i * 512):((i + 1) * 512)])
        tile = nl.load(in_tensor[:, nl.ds(i * 512, 512)])
        nl.store(out[:, nl.ds(i * 512, 512)], tile)
    copy = nl.ndarray(small_tensor.shape, dtype=small_tensor.dtype, buffer=nl.shared_hbm)
    grid = nl.mgrid[0:128, 0:512]
    small = nl.load(small_tensor[grid.p, grid.x])
    nl.store(copy[grid.p, grid.x], small)
    return out, copy


KERNEL = dslice_mgrid


def make_inputs(rng):
    return (rng.normal(size=(128, 2048)).astype(np.float32), rng.normal(size=(128, 512)).astype(np.float32))


def reference(a, b):
    return a.copy(), b.copy()
