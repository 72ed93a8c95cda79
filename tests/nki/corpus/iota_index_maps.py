"""Index maps generated on chip with tile-returning nisa.iota and written into the kernel's
arguments (out-parameters): a stride-3 column ramp offset by -7, a descending partition ramp,
the flat row-major index `row * 96 + col`, and the signed diagonal distance `col - row`.

Covers: @nki.trace, nisa.iota of free-axis, partition-axis and 2-d affine index expressions
(scaled, offset, negated, summed), int32 tiles stored into float32 HBM tensors through
`t[0, expr]` / `t[expr, 0]` / `t[expr_p, expr_f]` indices, OUT_ARGS checked by
nki.simulate_kernel."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.trace
def index_maps(col_ramp, row_ramp, flat_index, diagonal):
    col = nl.arange(0, 96)[None, :]
    row = nl.arange(0, 64)[:, None]
    nl.store(col_ramp[0, col], nisa.iota(col * 3 - 7, dtype=np.int32))
    nl.store(row_ramp[row, 0], nisa.iota(63 + row * -1, dtype=np.int32))
    nl.store(flat_index[row, col], nisa.iota(row * 96 + col, dtype=np.int32))
    nl.store(diagonal[row, col], nisa.iota(col - row, dtype=np.int32))


KERNEL = index_maps
OUT_ARGS = (0, 1, 2, 3)


def make_inputs(rng):
    return (rng.random((1, 96)).astype(np.float32), rng.random((64, 1)).astype(np.float32),
            rng.random((64, 96)).astype(np.float32), rng.random((64, 96)).astype(np.float32))


def reference(col_ramp, row_ramp, flat_index, diagonal):
    c = np.arange(96, dtype=np.float32)[None, :]
    r = np.arange(64, dtype=np.float32)[:, None]
    return 3 * c - 7, 63 - r, r * 96 + c, c - r
