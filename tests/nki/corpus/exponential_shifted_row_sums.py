"""exp(x - row max) and its row sums in one instruction.

Covers: nisa.exponential(dst=, src=, max_value=<[P, 1] tile>, reduce_res=,
reduce_cmd=nisa.reduce_cmd.reset_reduce) (reduce_res is written only when reduce_cmd
accumulates), a [P, 1] PSUM-free column result stored."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def exp_shifted(x):
    num = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    den = nl.ndarray((x.shape[0], 1), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    m = nisa.tensor_reduce(np.maximum, t, axis=[1], keepdims=True)
    e = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    s = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.exponential(dst=e, src=t, max_value=m, reduce_res=s, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nl.store(num, e)
    nl.store(den, s)
    return num, den


KERNEL = exp_shifted
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def make_inputs(rng):
    return (rng.normal(0, 5, size=(128, 200)).astype(np.float32),)


def reference(x):
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return e.astype(np.float32), e.sum(axis=1, keepdims=True).astype(np.float32)
