"""Row softmax at temperature T, p = exp((x - max) / T) / sum, written entirely with dst=
forms of nki.isa calls: the negated row max, scaled by 1/T, becomes the activation bias, exp
and row sum come from one activation_reduce with scale=1/T; a row of -1e30 is included.

Covers: nisa.dma_copy HBM -> SBUF of a float32 tile, nisa.tensor_reduce(dst=, op=nl.maximum,
axis=1, negate=True, keepdims=True), nisa.tensor_scalar(dst=, data=, op0=nl.multiply,
operand0=float) and with operand0=<[P, 1] tile>, nisa.activation_reduce(dst=, op=nl.exp,
data=, reduce_op=nl.add, reduce_res=, bias=, scale=), nisa.reciprocal(dst=, data=), a float
kernel argument."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def temperature_softmax(logits, temperature):
    rows, cols = logits.shape
    out = nl.ndarray((rows, cols), dtype=logits.dtype, buffer=nl.shared_hbm)
    x_sb = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=logits)
    shift = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=shift, op=nl.maximum, data=x_sb, axis=1, negate=True, keepdims=True)
    nisa.tensor_scalar(dst=shift, data=shift, op0=nl.multiply, operand0=1.0 / temperature)
    weights = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    norm = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation_reduce(dst=weights, op=nl.exp, data=x_sb, reduce_op=nl.add, reduce_res=norm, bias=shift,
                           scale=1.0 / temperature)
    inv_norm = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=inv_norm, data=norm)
    probs = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=probs, data=weights, op0=nl.multiply, operand0=inv_norm)
    nisa.dma_copy(dst=out, src=probs)
    return out


KERNEL = temperature_softmax
TOLERANCE = {"rtol": 1e-5, "atol": 1e-7}


def make_inputs(rng):
    logits = rng.normal(0, 4, size=(112, 60)).astype(np.float32)
    logits[9] = -1e30
    return (logits, 2.5)


def reference(logits, temperature):
    x = logits.astype(np.float64)
    e = np.exp((x - x.max(axis=1, keepdims=True)) / temperature)
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
