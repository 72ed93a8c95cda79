"""Integer bit-mask filter: keep the int32 values whose bit `bit` is set, zero the rest.

flag = (x >> bit) & 1 is a bitvec tensor_scalar on raw bits (a logical shift, as KLR's
NKI frontend lowers nl.right_shift); mask = flag * -1 is 0 or -1 (all ones), exact in the
engine's float32 arithmetic; out = x & mask keeps every bit of the selected values, so the
result is exact for every int32, negative numbers and the extremes included.
"""

import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def bitmask_filter(x, bit=3):
    p, n = x.shape
    out = nl.ndarray((p, n), dtype=nl.int32, buffer=nl.shared_hbm)
    data = nl.ndarray((p, n), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=data, src=x)

    flag = nl.ndarray((p, n), dtype=nl.int32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=flag, data=data, op0=nl.right_shift, operand0=bit,
                       op1=nl.bitwise_and, operand1=1)
    mask = nl.ndarray((p, n), dtype=nl.int32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=mask, data=flag, op0=nl.multiply, operand0=-1.0)

    kept = nl.ndarray((p, n), dtype=nl.int32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=kept, data1=data, data2=mask, op=nl.bitwise_and)
    nisa.dma_copy(dst=out, src=kept)
    return out


KERNEL = bitmask_filter
TOLERANCE = {"rtol": 0.0, "atol": 0.0}


def make_inputs(rng):
    x = rng.integers(-2**31, 2**31, size=(128, 64), dtype=np.int64).astype(np.int32)
    x[0, :4] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max, -1, 8]
    return (x,)


def reference(x, bit=3):
    return np.where((x >> bit) & 1, x, 0).astype(np.int32)
