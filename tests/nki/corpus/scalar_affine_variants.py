"""Three tile-returning nisa.tensor_scalar forms: x * 3.0 (positional), 10.0 - y (reverse0),
and (z + offset) * 0.5 on a 32-partition tile with a [32, 1] per-partition offset column.

Covers: nisa.tensor_scalar(tile[i_p, i_f], op, float) positionally, reverse0=True, the
two-op form op0= / operand0=[P, 1] tile view / op1= / operand1=float, 128- and 32-partition
tiles addressed through nl.arange indices, three returned tensors."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def scalar_variants(x_hbm, y_hbm, z_hbm, offset_hbm):
    tripled = nl.ndarray(x_hbm.shape, dtype=x_hbm.dtype, buffer=nl.shared_hbm)
    flipped = nl.ndarray(y_hbm.shape, dtype=y_hbm.dtype, buffer=nl.shared_hbm)
    halved = nl.ndarray(z_hbm.shape, dtype=z_hbm.dtype, buffer=nl.shared_hbm)
    p = nl.arange(128)[:, None]
    f = nl.arange(200)[None, :]
    x = nl.load(x_hbm[p, f])
    nl.store(tripled[p, f], nisa.tensor_scalar(x[p, f], np.multiply, 3.0))
    y = nl.load(y_hbm[p, f])
    nl.store(flipped[p, f], nisa.tensor_scalar(y[p, f], np.subtract, 10.0, reverse0=True))
    p32 = nl.arange(32)[:, None]
    fz = nl.arange(640)[None, :]
    f1 = nl.arange(1)[None, :]
    z = nl.load(z_hbm[p32, fz])
    off = nl.load(offset_hbm[p32, f1])
    shifted = nisa.tensor_scalar(z[p32, fz], op0=np.add, operand0=off[p32, f1], op1=np.multiply,
                                 operand1=0.5)
    nl.store(halved[p32, fz], shifted)
    return tripled, flipped, halved


KERNEL = scalar_variants


def make_inputs(rng):
    return (rng.normal(size=(128, 200)).astype(np.float32), rng.normal(size=(128, 200)).astype(np.float32),
            rng.normal(size=(32, 640)).astype(np.float32), rng.normal(size=(32, 1)).astype(np.float32))


def reference(x, y, z, offset):
    return x * np.float32(3.0), np.float32(10.0) - y, (z + offset) * np.float32(0.5)
