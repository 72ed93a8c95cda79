"""nki.isa.iota docstring examples (tile-returning form, NKI 1.x out-parameters): ramps
along the free axis, across partitions, negated, offset + scaled, and their broadcast sum,
stored into the kernel's arguments (int32 tiles into float32 tensors).
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_isa_iota.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.trace
def iota_examples(a_tensor, b_tensor, c_tensor, d_tensor, e_tensor):
    expr_a = nl.arange(0, 512)[None, :]
    a = nisa.iota(expr_a, dtype=np.int32)
    expr_b = nl.arange(0, 128)[:, None]
    b = nisa.iota(expr_b, dtype=np.int32)
    expr_c = expr_a * -1
    c = nisa.iota(expr_c, dtype=np.int32)
    expr_d = 5 + expr_b * 2
    d = nisa.iota(expr_d, dtype=np.int32)
    e = nisa.iota(expr_a + expr_b, dtype=np.int32)
    nl.store(a_tensor[0, expr_a], a)
    nl.store(b_tensor[expr_b, 0], b)
    nl.store(c_tensor[0, expr_a], c)
    nl.store(d_tensor[expr_b, 0], d)
    nl.store(e_tensor[expr_b, expr_a], e)


KERNEL = iota_examples
OUT_ARGS = (0, 1, 2, 3, 4)


def make_inputs(rng):
    return (rng.random((1, 512)).astype(np.float32), rng.random((128, 1)).astype(np.float32),
            rng.random((1, 512)).astype(np.float32), rng.random((128, 1)).astype(np.float32),
            rng.random((128, 512)).astype(np.float32))


def reference(a, b, c, d, e):
    row = np.arange(512, dtype=np.float32)[None, :]
    col = np.arange(128, dtype=np.float32)[:, None]
    return row, col, -row, 5 + 2 * col, row + col
