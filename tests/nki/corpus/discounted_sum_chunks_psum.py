"""Discounted running sums over a long sequence, for several discount schedules: per
schedule g, factor = exp(-slope[c, g] * age[t]) and s[t] = factor[t] * s[t-1] + reward[t],
and the output is sum_g s_g[t] * weight[b, g, t]. The 1024-step sequence is scanned in
256-step chunks under nl.static_range, the scan state carried from chunk to chunk in a [P, 1]
tile; each weighted chunk is staged in PSUM and accumulated into an SBUF slice.

Covers: nl.static_range, nl.zeros((P, 1)) as the carried scan state, tensor_tensor_scan with
initial=<[P, 1] tile>, `state[...] = h[0:P, F - 1]` (last column into the carry), activation
with scale= on a column slice `t[0:P, a:b]`, nl.ndarray(buffer=nl.psum) written with
`psum_tile[...] = nisa.tensor_tensor(...)`, `acc[0:P, a:b] += psum_tile`, nki.isa.* via the
nki module."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def discounted_sums(age, reward, slope, weight):
    batch, chans, steps = age.shape
    _, n_sched = slope.shape
    p = nl.tile_size.pmax
    span = 256
    assert chans % p == 0 and steps % span == 0
    out = nl.ndarray((batch, chans, steps), dtype=reward.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(batch):
        for ct in nl.affine_range(chans // p):
            lo = ct * p
            acc = nl.zeros((nl.par_dim(p), steps), dtype=reward.dtype)
            ages = nl.load(age[b, lo:lo + p, 0:steps])
            gains = nl.load(reward[b, lo:lo + p, 0:steps])
            for g in nl.affine_range(n_sched):
                neg_slope = nl.load(slope[lo:lo + p, g])
                carry = nl.zeros((p, 1), dtype=ages.dtype)
                for part in nl.static_range(steps // span):
                    t0 = part * span
                    factor = nisa.activation(op=nl.exp, data=ages[0:p, t0:t0 + span], scale=neg_slope)
                    total = nki.isa.tensor_tensor_scan(factor, gains[0:p, t0:t0 + span], initial=carry,
                                                       op0=np.multiply, op1=np.add)
                    carry[...] = total[0:p, span - 1]
                    w_row = nl.load(weight[b, g:g + 1, t0:t0 + span])
                    staged = nl.ndarray((p, span), dtype=reward.dtype, buffer=nl.psum)
                    staged[...] = nisa.tensor_tensor(total, w_row.broadcast_to((p, span)), op=nl.multiply)
                    acc[0:p, t0:t0 + span] += staged
            nl.store(out[b, lo:lo + p, 0:steps], acc[0:p, 0:steps])
    return out


KERNEL = discounted_sums
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def make_inputs(rng):
    batch, chans, steps, n_sched = 1, 128, 1024, 2
    return (rng.uniform(0.0, 0.3, (batch, chans, steps)).astype(np.float32),
            rng.normal(size=(batch, chans, steps)).astype(np.float32),
            -rng.uniform(0.1, 1.0, (chans, n_sched)).astype(np.float32),
            rng.normal(size=(batch, n_sched, steps)).astype(np.float32))


def reference(age, reward, slope, weight):
    age, reward, slope, weight = (v.astype(np.float64) for v in (age, reward, slope, weight))
    out = np.zeros_like(reward)
    for g in range(slope.shape[1]):
        factor = np.exp(age * slope[None, :, g, None])
        s = np.zeros(reward.shape[:2])
        for t in range(reward.shape[2]):
            s = factor[:, :, t] * s + reward[:, :, t]
            out[:, :, t] += s * weight[:, g, t][:, None]
    return out.astype(np.float32)
