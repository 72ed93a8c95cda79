"""Three data movements: a whole [64, 200] tensor copied through SBUF, a [3, 96, 40] batch
staged through nl.zeros tiles written with mgrid indices and shifted by +batch index, and a
[200, 1] column copied HBM to HBM by one nisa.dma_copy.

Covers: whole-tensor nl.load / nl.store, nl.zeros tiles assigned through `tile[i_p, i_f] =
nl.load(t[b, i_p, i_f])`, `nl.store(value=tile[i_p, i_f])` of an indexed tile, nl.affine_range
over a batch axis with integer indexing, tile + loop variable, nisa.dma_copy(src=, dst=)
between two HBM tensors."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def staged_copies(plain, batch, column):
    plain_out = nl.ndarray(plain.shape, plain.dtype, buffer=nl.shared_hbm)
    nl.store(plain_out, nl.load(plain))
    batch_out = nl.ndarray(batch.shape, batch.dtype, buffer=nl.shared_hbm)
    n_batch, rows, cols = batch.shape
    for b in nl.affine_range(n_batch):
        staging = nl.zeros((rows, cols), dtype=batch.dtype)
        r, c = nl.mgrid[0:rows, 0:cols]
        staging[r, c] = nl.load(batch[b, r, c])
        nl.store(batch_out[b, r, c], value=staging[r, c] + b)
    column_out = nl.ndarray(column.shape, dtype=column.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=column_out, src=column)
    return plain_out, batch_out, column_out


KERNEL = staged_copies


def make_inputs(rng):
    return (rng.normal(size=(64, 200)).astype(np.float32), rng.normal(size=(3, 96, 40)).astype(np.float32),
            rng.normal(size=(200, 1)).astype(np.float32))


def reference(plain, batch, column):
    shift = np.arange(batch.shape[0], dtype=np.float32)[:, None, None]
    return plain.copy(), batch + shift, column.copy()
