"""Each program (i, j) of a [2, 3] launch grid negates its 128 x 32 block of a [256, 96]
tensor and adds i * 10 + j.

Covers: a 2-d SPMD grid (`kernel[2, 3]`), nl.program_id(0) and (1) in slices and in an
immediate."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def blocks2d(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    j = nl.program_id(1)
    t = nl.load(x[i * 128:(i + 1) * 128, j * 32:(j + 1) * 32])
    u = nisa.tensor_scalar(t, np.multiply, -1.0, op1=np.add, operand1=float(i * 10 + j))
    nl.store(out[i * 128:(i + 1) * 128, j * 32:(j + 1) * 32], u)
    return out


KERNEL = blocks2d[2, 3]


def make_inputs(rng):
    return (rng.normal(size=(256, 96)).astype(np.float32),)


def reference(x):
    out = -x
    for i in range(2):
        for j in range(3):
            out[i * 128:(i + 1) * 128, j * 32:(j + 1) * 32] += np.float32(i * 10 + j)
    return out
