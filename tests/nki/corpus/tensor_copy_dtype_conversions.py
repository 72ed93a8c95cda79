"""tensor_copy of float32 values with halves, negatives, 1e10, NaN and +-inf into int32,
int8, uint8, bfloat16 and float16 tiles (round half to even, saturate, NaN -> 0, fp16
overflow -> inf).

Covers: legacy nisa.tensor_copy(src, dtype=), a tuple of outputs built in a list."""
import ml_dtypes
import numpy as np
import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def casts(x):
    outs = [nl.ndarray(x.shape, dtype=d, buffer=nl.shared_hbm)
            for d in (nl.int32, nl.int8, nl.uint8, nl.bfloat16, nl.float16)]
    t = nl.load(x)
    for o in outs:
        nl.store(o, nisa.tensor_copy(t, dtype=o.dtype))
    return tuple(outs)


KERNEL = casts


def make_inputs(rng):
    x = rng.normal(0, 100, size=(16, 32)).astype(np.float32)
    x[0, :8] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e10, -1e10]
    x[1, :4] = [np.nan, np.inf, -np.inf, 70000.0]
    return (x,)


def to_int(x, dt):
    i = np.iinfo(dt)
    r = np.rint(x.astype(np.float64))
    return np.clip(np.where(np.isnan(r), 0, r), i.min, i.max).astype(dt)


def reference(x):
    with np.errstate(over="ignore"):
        return (to_int(x, np.int32), to_int(x, np.int8), to_int(x, np.uint8),
                x.astype(ml_dtypes.bfloat16), x.astype(np.float16))
