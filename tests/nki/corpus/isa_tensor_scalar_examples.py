"""nki.isa.tensor_scalar docstring examples (tile-returning form): a - 1.0, 1.0 - c with
reverse0, and e * f + 2.5 with a [64, 1] column operand on a 64-partition tile.
SOURCE: aws-neuron/aws-neuron-sdk general/nki/test/test_nki_isa_tensor_scalar.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit(mode="simulation")
def tensor_scalar_examples(a_tensor, c_tensor, e_tensor, f_tensor):
    b_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    d_tensor = nl.ndarray(c_tensor.shape, dtype=c_tensor.dtype, buffer=nl.shared_hbm)
    g_tensor = nl.ndarray(e_tensor.shape, dtype=e_tensor.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    a = nl.load(a_tensor[i_p, i_f])
    b = nisa.tensor_scalar(a[i_p, i_f], np.subtract, 1.0)
    nl.store(b_tensor[i_p, i_f], b)
    c = nl.load(c_tensor[i_p, i_f])
    d = nisa.tensor_scalar(c[i_p, i_f], np.subtract, 1.0, reverse0=True)
    nl.store(d_tensor[i_p, i_f], d)
    i_p64 = nl.arange(64)[:, None]
    i_f_e = nl.arange(1024)[None, :]
    i_f_f = nl.arange(1)[None, :]
    e = nl.load(e_tensor[i_p64, i_f_e])
    f = nl.load(f_tensor[i_p64, i_f_f])
    g = nisa.tensor_scalar(e[i_p64, i_f_e], op0=np.multiply, operand0=f[i_p64, i_f_f], op1=np.add,
                           operand1=2.5)
    nl.store(g_tensor[i_p64, i_f_e], g)
    return b_tensor, d_tensor, g_tensor


KERNEL = tensor_scalar_examples


def make_inputs(rng):
    return (rng.normal(size=(128, 512)).astype(np.float32), rng.normal(size=(128, 512)).astype(np.float32),
            rng.normal(size=(64, 1024)).astype(np.float32), rng.normal(size=(64, 1)).astype(np.float32))


def reference(a, c, e, f):
    return a - 1, 1 - c, e * f + np.float32(2.5)
