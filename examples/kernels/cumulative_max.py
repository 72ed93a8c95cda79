"""Running maximum of each row with tensor_scalar_cumulative, seeded by a floor value.

reg = max(x[i] + 0.0, reg); out[i] = reg. The first half of the columns starts from
`floor` (reduce_cmd=load_reduce, imm1=floor); the second half continues from the register
the first half left (reduce_cmd=reduce), so the two instructions form one scan.
"""

import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def cumulative_max(x, floor=-2.0):
    p, n = x.shape
    half = n // 2
    out = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.shared_hbm)
    data = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=data, src=x)
    running = nl.ndarray((p, n), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar_cumulative(dst=running[:, 0:half], src=data[:, 0:half], op0=nl.add,
                                  op1=nl.maximum, imm0=0.0, imm1=floor,
                                  reduce_cmd=nisa.reduce_cmd.load_reduce)
    nisa.tensor_scalar_cumulative(dst=running[:, half:n], src=data[:, half:n], op0=nl.add,
                                  op1=nl.maximum, imm0=0.0, reduce_cmd=nisa.reduce_cmd.reduce)
    nisa.dma_copy(dst=out, src=running)
    return out


KERNEL = cumulative_max
TOLERANCE = {"rtol": 0.0, "atol": 0.0}   # max is exact


def make_inputs(rng):
    x = rng.normal(0.0, 3.0, size=(128, 200)).astype(np.float32)
    x[1, :] = -5.0          # never above the floor
    x[2, :] = np.arange(200, 0, -1)   # the maximum is the first element
    return (x,)


def reference(x, floor=-2.0):
    return np.maximum.accumulate(np.concatenate(
        [np.full((x.shape[0], 1), floor, np.float32), x], axis=1), axis=1)[:, 1:]
