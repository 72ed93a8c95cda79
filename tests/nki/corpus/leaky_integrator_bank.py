"""A bank of leaky integrators driven by several input currents: for every input j, a neuron
channel leaks with rate leak[c, j] over step sizes dt (decay = exp(-leak * dt)), integrates
current[b, c, t] * gate[b, j, t], and the potentials are summed with readout weights
readout[b, j, t]. One 2-d accumulator per 128-channel tile; dt and current loaded once per
tile and reused for every input.

Covers: nl.zeros((nl.par_dim(P), T)) as a 2-d accumulator, tiles loaded outside the inner
loop, tile-returning nisa.activation(op=nl.exp, data=, scale=<[P, 1] column>),
nisa.tensor_tensor with op=nl.multiply, nisa.tensor_tensor_scan(initial=0, op0=np.multiply,
op1=np.add), .broadcast_to((P, T)) of a [1, T] row, `acc[0:P, 0:T] += nisa.tensor_tensor(...)`
straight from a call."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def integrator_bank(dt, current, leak, gate, readout):
    batch, chans, steps = dt.shape
    _, n_inputs = leak.shape
    p = nl.tile_size.pmax
    potential = nl.ndarray((batch, chans, steps), dtype=current.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(batch):
        for ct in nl.affine_range(chans // p):
            lo = ct * p
            acc = nl.zeros((nl.par_dim(p), steps), dtype=current.dtype)
            step_sizes = nl.load(dt[b, lo:lo + p, 0:steps])
            cur = nl.load(current[b, lo:lo + p, 0:steps])
            for j in nl.affine_range(n_inputs):
                neg_leak = nl.load(leak[lo:lo + p, j])
                decay = nisa.activation(op=nl.exp, data=step_sizes, scale=neg_leak)
                gate_row = nl.load(gate[b, j:j + 1, 0:steps])
                gated = nisa.tensor_tensor(cur, gate_row.broadcast_to((p, steps)), op=nl.multiply)
                v = nisa.tensor_tensor_scan(decay, gated, initial=0, op0=np.multiply, op1=np.add)
                read_row = nl.load(readout[b, j:j + 1, 0:steps])
                acc[0:p, 0:steps] += nisa.tensor_tensor(v, read_row.broadcast_to((p, steps)), op=nl.multiply)
            nl.store(potential[b, lo:lo + p, 0:steps], acc[0:p, 0:steps])
    return potential


KERNEL = integrator_bank
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def make_inputs(rng):
    batch, chans, steps, n_inputs = 2, 256, 40, 2
    return (rng.uniform(0.1, 0.8, (batch, chans, steps)).astype(np.float32),
            rng.normal(size=(batch, chans, steps)).astype(np.float32),
            -rng.uniform(0.3, 1.5, (chans, n_inputs)).astype(np.float32),
            rng.uniform(0.0, 2.0, (batch, n_inputs, steps)).astype(np.float32),
            rng.normal(size=(batch, n_inputs, steps)).astype(np.float32))


def reference(dt, current, leak, gate, readout):
    dt, current, leak, gate, readout = (v.astype(np.float64) for v in (dt, current, leak, gate, readout))
    out = np.zeros_like(current)
    for j in range(leak.shape[1]):
        decay = np.exp(dt * leak[None, :, j, None])
        v = np.zeros(current.shape[:2])
        for t in range(current.shape[2]):
            v = decay[:, :, t] * v + current[:, :, t] * gate[:, j, t][:, None]
            out[:, :, t] += v * readout[:, j, t][:, None]
    return out.astype(np.float32)
