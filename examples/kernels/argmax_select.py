"""Row argmax by compare-and-select: the first index of each row's maximum, as int32.

max = tensor_reduce(max); hit = (x == max) as 1.0 / 0.0; cand = hit * -BIG + index
(scalar_tensor_tensor, with the column index from iota); the smallest cand is the first
hit, minus BIG; adding BIG back and writing int32 gives the index.
"""

import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl

BIG = 1048576.0   # 2**20: exact in float32, larger than any column index


@nki.jit
def argmax_select(x):
    p, n = x.shape
    out = nl.ndarray((p, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    data = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=data, src=x)
    index = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.iota(dst=index, pattern=[[1, n]], offset=0, channel_multiplier=0)

    row_max = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=row_max, op=nl.maximum, data=data, axis=1)
    hit = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=hit, data=data, op0=nl.equal, operand0=row_max)
    cand = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.scalar_tensor_tensor(dst=cand, data=hit, op0=nl.multiply, operand0=-BIG,
                              op1=nl.add, operand1=index)

    first = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=first, op=nl.minimum, data=cand, axis=1)
    arg = nl.ndarray((p, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=arg, data=first, op0=nl.add, operand0=BIG)
    nisa.dma_copy(dst=out, src=arg)
    return out


KERNEL = argmax_select
TOLERANCE = {"rtol": 0.0, "atol": 0.0}


def make_inputs(rng):
    x = rng.normal(0.0, 1.0, size=(128, 100)).astype(np.float32)
    x[0, :] = 7.0                     # all equal: the first index wins
    x[1, [10, 60]] = 50.0             # a tie: the first one wins
    x[2, 99] = 1e6                    # the last column
    x[3, :] = -np.inf
    x[3, 42] = -1e38
    return (x,)


def reference(x):
    return np.argmax(x, axis=1).astype(np.int32).reshape(-1, 1)
