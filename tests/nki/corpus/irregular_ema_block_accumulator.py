"""A bank of exponential moving averages over irregularly sampled signals, mixed per time
step: for every smoothing rate k (one per channel and rate), decay = exp(-rate * dt) and
h[t] = decay[t] * h[t-1] + (1 - decay[t]) * x[t]; the output is sum_k mix[b, k, t] * h_k[t].
The accumulator holds every 128-channel tile of a batch at once, as a block dim in front of
nl.par_dim.

Covers: nl.zeros((n_tiles, nl.par_dim(P), T)) (a block dim before par_dim), three nested
nl.affine_range loops, a [P, 1] column loaded by integer indexing of a 2-d HBM tensor
(`rate[c0:c0 + P, k]`), tile-returning nisa.activation(op=nl.exp, data=, scale=<column>),
nisa.tensor_scalar(..., reverse0=True) for 1 - decay, nisa.tensor_tensor(op=nl.multiply),
a [1, T] row loaded with `t[b, k:k + 1, 0:T]` and .broadcast_to((P, T)),
nki.isa.tensor_tensor_scan reached through the `nki` module, `acc[i, 0:P, 0:T] += tile`."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def ema_bank(dt, x, rate, mix):
    batch, chans, steps = dt.shape
    _, n_rates = rate.shape
    p = nl.tile_size.pmax
    assert chans % p == 0
    n_tiles = chans // p
    out = nl.ndarray((batch, chans, steps), dtype=x.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(batch):
        acc = nl.zeros((n_tiles, nl.par_dim(p), steps), dtype=x.dtype)
        for ct in nl.affine_range(n_tiles):
            c0 = ct * p
            for k in nl.affine_range(n_rates):
                gaps = nl.load(dt[b, c0:c0 + p, 0:steps])
                neg_rate = nl.load(rate[c0:c0 + p, k])
                decay = nisa.activation(op=nl.exp, data=gaps, scale=neg_rate)
                keep = nisa.tensor_scalar(decay, np.subtract, 1.0, reverse0=True)
                signal = nl.load(x[b, c0:c0 + p, 0:steps])
                drive = nisa.tensor_tensor(keep, signal, op=nl.multiply)
                smooth = nki.isa.tensor_tensor_scan(decay, drive, initial=0, op0=np.multiply, op1=np.add)
                weight = nl.load(mix[b, k:k + 1, 0:steps])
                acc[ct, 0:p, 0:steps] += nisa.tensor_tensor(smooth, weight.broadcast_to((p, steps)),
                                                             op=nl.multiply)
        for ct in nl.affine_range(n_tiles):
            nl.store(out[b, ct * p:(ct + 1) * p, 0:steps], acc[ct, 0:p, 0:steps])
    return out


KERNEL = ema_bank
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def make_inputs(rng):
    batch, chans, steps, n_rates = 2, 256, 24, 3
    return (rng.uniform(0.05, 1.5, (batch, chans, steps)).astype(np.float32),
            rng.normal(size=(batch, chans, steps)).astype(np.float32),
            -rng.uniform(0.2, 3.0, (chans, n_rates)).astype(np.float32),
            rng.uniform(0.0, 1.0, (batch, n_rates, steps)).astype(np.float32))


def reference(dt, x, rate, mix):
    dt, x, rate, mix = (v.astype(np.float64) for v in (dt, x, rate, mix))
    out = np.zeros_like(x)
    for k in range(rate.shape[1]):
        decay = np.exp(dt * rate[None, :, k, None])
        h = np.zeros(x.shape[:2])
        for t in range(x.shape[2]):
            h = decay[:, :, t] * h + (1.0 - decay[:, :, t]) * x[:, :, t]
            out[:, :, t] += mix[:, k, t][:, None] * h
    return out.astype(np.float32)
