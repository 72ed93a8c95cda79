"""Two tile-returning nisa.activation forms: exp of a [96, 200] tile, and the bfloat16 result
of square(-0.5 * y + c) with a per-partition bias column c.

Covers: @nki.jit(mode="simulation"), nisa.activation(op=nl.exp, data=) with no scale / bias,
nisa.activation(op=np.square, data=, bias=[P, 1] tile, scale=float, dtype=nl.bfloat16), two
returned tensors."""
import ml_dtypes
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def exp_and_shifted_square(x_hbm, y_hbm, centre_hbm):
    grown = nl.ndarray(x_hbm.shape, dtype=x_hbm.dtype, buffer=nl.shared_hbm)
    energy = nl.ndarray(y_hbm.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nl.store(grown, nisa.activation(op=nl.exp, data=nl.load(x_hbm)))
    y = nl.load(y_hbm)
    centre = nl.load(centre_hbm)
    nl.store(energy, nisa.activation(op=np.square, data=y, bias=centre, scale=-0.5, dtype=nl.bfloat16))
    return grown, energy


KERNEL = exp_and_shifted_square
TOLERANCE = {"rtol": 1e-2, "atol": 1e-5}


def make_inputs(rng):
    return (rng.uniform(-6.0, 3.0, (96, 200)).astype(np.float32),
            rng.normal(0, 2, (96, 70)).astype(np.float32),
            rng.normal(size=(96, 1)).astype(np.float32))


def reference(x, y, centre):
    sq = np.square(-0.5 * y.astype(np.float64) + centre).astype(np.float32).astype(ml_dtypes.bfloat16)
    return np.exp(x.astype(np.float64)).astype(np.float32), sq
