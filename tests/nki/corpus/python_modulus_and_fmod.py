"""nl.mod (Python's modulus: the sign of the divisor) and nl.fmod (the sign of the dividend)
of negative and positive values, by 3.0, by -2.5 and by a tile of mixed signs.

Covers: nl.mod with a number and with a tile divisor (the fmod remainder corrected where
the signs differ), nl.fmod."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def mods(x, y):
    o1 = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    o2 = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    o3 = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    o4 = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tx = nl.load(x)
    ty = nl.load(y)
    nl.store(o1, nl.mod(tx, 3.0))
    nl.store(o2, nl.fmod(tx, 3.0))
    nl.store(o3, nl.mod(tx, ty))
    nl.store(o4, nl.mod(tx, -2.5))
    return o1, o2, o3, o4


KERNEL = mods
TOLERANCE = {"rtol": 1e-6, "atol": 1e-6}


def make_inputs(rng):
    x = rng.uniform(-20, 20, size=(64, 32)).astype(np.float32)
    x[0, :4] = [-6.0, 6.0, -0.0, 0.0]
    y = rng.uniform(0.5, 4, size=(64, 32)).astype(np.float32) * rng.choice([-1, 1], size=(64, 32)).astype(np.float32)
    return x, y


def reference(x, y):
    return (np.mod(x, np.float32(3)), np.fmod(x, np.float32(3)), np.mod(x, y), np.mod(x, np.float32(-2.5)))
