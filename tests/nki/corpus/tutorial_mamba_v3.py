"""Mamba selective-scan (v3): the sequence in 512-element chunks under nl.static_range,
the scan carried between chunks through a [P, 1] tile (`scan_init[...] = h[0:P, F - 1]`),
the product staged in a PSUM tile and accumulated into an SBUF slice with `+=`.
SOURCE: aws-neuron/nki-samples src/nki_samples/tutorials/fused_mamba/mamba_nki_kernels.py"""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def mamba_v3(delta, u, A, B, C):
    batch, channels, seq = delta.shape
    out = nl.ndarray((batch, channels, seq), dtype=delta.dtype, buffer=nl.shared_hbm)
    _, states = A.shape
    p = nl.tile_size.pmax
    chunk = 512
    assert channels % p == 0 and seq % chunk == 0
    for b in nl.affine_range(batch):
        for t in nl.affine_range(channels // p):
            c0 = t * p
            acc = nl.zeros((nl.par_dim(p), seq), dtype=delta.dtype)
            delta_t = nl.load(delta[b, c0:c0 + p, 0:seq])
            u_t = nl.load(u[b, c0:c0 + p, 0:seq])
            for s in nl.affine_range(states):
                a_col = nl.load(A[c0:c0 + p, s])
                scan_init = nl.zeros((p, 1), dtype=delta_t.dtype)
                for k in nl.static_range(seq // chunk):
                    f0 = k * chunk
                    decay = nisa.activation(op=nl.exp, data=delta_t[0:p, f0:f0 + chunk], scale=a_col)
                    b_row = nl.load(B[b, s:s + 1, f0:f0 + chunk])
                    du = nisa.tensor_tensor(delta_t[0:p, f0:f0 + chunk], u_t[0:p, f0:f0 + chunk],
                                            op=nl.multiply)
                    dbu = nisa.tensor_tensor(du, b_row.broadcast_to((p, chunk)), op=nl.multiply)
                    h = nki.isa.tensor_tensor_scan(decay, dbu, initial=scan_init, op0=np.multiply,
                                                   op1=np.add)
                    scan_init[...] = h[0:p, chunk - 1]
                    c_row = nl.load(C[b, s:s + 1, f0:f0 + chunk])
                    staged = nl.ndarray((p, chunk), dtype=delta.dtype, buffer=nl.psum)
                    staged[...] = nisa.tensor_tensor(h, c_row.broadcast_to((p, chunk)), op=nl.multiply)
                    acc[0:p, f0:f0 + chunk] += staged
            nl.store(out[b, c0:c0 + p, 0:seq], acc[0:p, 0:seq])
    return out


KERNEL = mamba_v3
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def make_inputs(rng):
    batch, channels, seq, states = 1, 128, 1024, 2
    return (rng.uniform(0.0, 0.5, (batch, channels, seq)).astype(np.float32),
            rng.normal(size=(batch, channels, seq)).astype(np.float32),
            -rng.uniform(0.5, 2.0, (channels, states)).astype(np.float32),
            rng.normal(size=(batch, states, seq)).astype(np.float32),
            rng.normal(size=(batch, states, seq)).astype(np.float32))


def reference(delta, u, A, B, C):
    delta, u, A, B, C = (x.astype(np.float64) for x in (delta, u, A, B, C))
    batch, channels, seq = delta.shape
    out = np.zeros_like(delta)
    for s in range(A.shape[1]):
        decay = np.exp(delta * A[None, :, s, None])
        dbu = delta * u * B[:, None, s, :]
        h = np.zeros((batch, channels))
        for i in range(seq):
            h = decay[:, :, i] * h + dbu[:, :, i]
            out[:, :, i] += h * C[:, s, i][:, None]
    return out.astype(np.float32)
