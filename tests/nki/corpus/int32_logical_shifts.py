"""int32 shifts of negative numbers and the extremes: left shift by 3, right shift by 4 and
by 28 (zeros shift in: KLR's NKI frontend traces right shifts as logical), bitwise not.

Covers: nl.left_shift / nl.right_shift / nl.invert on tiles, nisa.tensor_scalar(np.right_shift)."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def shifts(a):
    o1 = nl.ndarray(a.shape, dtype=nl.int32, buffer=nl.shared_hbm)
    o2 = nl.ndarray(a.shape, dtype=nl.int32, buffer=nl.shared_hbm)
    o3 = nl.ndarray(a.shape, dtype=nl.int32, buffer=nl.shared_hbm)
    o4 = nl.ndarray(a.shape, dtype=nl.int32, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(o1, nl.left_shift(t, 3))
    nl.store(o2, nl.right_shift(t, 4))
    nl.store(o3, nisa.tensor_scalar(t, np.right_shift, 28))
    nl.store(o4, nl.invert(t))
    return o1, o2, o3, o4


KERNEL = shifts


def make_inputs(rng):
    a = rng.integers(-2**31, 2**31, size=(16, 8), dtype=np.int64).astype(np.int32)
    a[0, :4] = [-1, -2**31, 2**31 - 1, 0]
    return (a,)


def reference(a):
    return a << 3, (a.view(np.uint32) >> 4).view(np.int32), (a.view(np.uint32) >> 28).view(np.int32), ~a
