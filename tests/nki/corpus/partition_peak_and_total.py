"""Cross-partition reductions with tile-returning nisa.tensor_partition_reduce, written into
the kernel's arguments: the per-column peak (np.maximum) over the 96 partitions of a
[96, 16, 2] tensor, and per batch the column totals (np.add) of a [3, 64, 8, 4] tensor
(the cross-partition reduce works on 32-partition banks of 32-element multiples).

Covers: @nki.trace with out-parameters, nl.load of an explicit slice window
`t[0:96, 0:16, 0:2]`, nisa.tensor_partition_reduce with np.maximum and np.add on 3-d tiles,
stores into `[0:1, ...]` slices, nl.affine_range over a batch dimension read from a shape with
integer indexing `t[i]`."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.trace
def peak_and_total(samples, peak, batches, totals):
    cube = nl.load(samples[0:96, 0:16, 0:2])
    nl.store(peak[0:1, 0:16, 0:2], nisa.tensor_partition_reduce(np.maximum, cube))
    for b in nl.affine_range(batches.shape[0]):
        total = nisa.tensor_partition_reduce(np.add, nl.load(batches[b]))
        nl.store(totals[b], total)


KERNEL = peak_and_total
OUT_ARGS = (1, 3)
TOLERANCE = {"rtol": 1e-5, "atol": 1e-4}


def make_inputs(rng):
    return (rng.normal(size=(96, 16, 2)).astype(np.float32), np.zeros((1, 16, 2), np.float32),
            rng.normal(size=(3, 64, 8, 4)).astype(np.float32), np.zeros((3, 1, 8, 4), np.float32))


def reference(samples, peak, batches, totals):
    return (samples.max(axis=0, keepdims=True),
            batches.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32))
