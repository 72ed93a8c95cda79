"""SPMD element-wise product of two float16 [256, 1024] tensors: a [2, 2] launch grid, each
program multiplies one [128, 512] tile addressed by mgrid indices shifted by nl.program_id.

Covers: a 2-d grid with nl.program_id(0) / nl.program_id(1) scaled into row / column offsets,
unpacked nl.mgrid indices plus those offsets on load and store, the `*` operator on tiles,
float16 data; `launch` shows the grid computed from the input shape."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def spmd_product(x_input, y_input):
    z_output = nl.ndarray(x_input.shape, dtype=x_input.dtype, buffer=nl.shared_hbm)
    r, c = nl.mgrid[0:128, 0:512]
    rows = nl.program_id(0) * 128 + r
    cols = nl.program_id(1) * 512 + c
    x_tile = nl.load(x_input[rows, cols])
    y_tile = nl.load(y_input[rows, cols])
    nl.store(z_output[rows, cols], value=x_tile * y_tile)
    return z_output


def launch(x_input, y_input):
    return spmd_product[x_input.shape[0] // 128, x_input.shape[1] // 512](x_input, y_input)


KERNEL = spmd_product[2, 2]
TOLERANCE = {"rtol": 1e-3, "atol": 1e-3}


def make_inputs(rng):
    return (rng.uniform(-2, 2, (256, 1024)).astype(np.float16),
            rng.uniform(-2, 2, (256, 1024)).astype(np.float16))


def reference(x, y):
    return x * y
