"""Rows measured against a per-row anchor: d = x - anchor, y = d * rsqrt(mean(d^2) + eps) *
w, for 170 rows in 128-row tiles with a masked partial last tile. The squared distance sum
comes from activation_reduce(op=nl.square) with the negated anchor as the activation bias.

Covers: tile-returning nisa.activation_reduce(op=nl.square, reduce_op=np.add, reduce_res=,
bias=<[P, 1] tile view>, mask=) assigned into `act[...]`, a two-op positional
nisa.tensor_scalar(t, np.multiply, 1/W, op1=np.add, operand1=<float argument>, mask=),
nisa.activation(op=nl.rsqrt, mask=), nisa.tensor_scalar with a [P, 1] tile operand,
nl.negative, nl.multiply(mask=) by a broadcast weight row loaded from a .reshape((1, W)) view,
unpacked nl.mgrid, masked load / store."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def anchored_scale(x, anchor, weight, eps):
    n_rows, width = x.shape
    pmax = nl.tile_size.pmax
    out = nl.ndarray((n_rows, width), dtype=x.dtype, buffer=nl.shared_hbm)
    w_all = nl.load(weight.reshape((1, width))).broadcast_to((pmax, width))
    ip, jf = nl.mgrid[0:pmax, 0:width]
    ip1, j1 = nl.mgrid[0:pmax, 0:1]
    for blk in nl.affine_range((n_rows + pmax - 1) // pmax):
        ok = blk * pmax + ip < n_rows
        ok1 = blk * pmax + ip1 < n_rows
        rows = nl.load(x[blk * pmax + ip, jf], mask=ok)
        centre = nl.load(anchor[blk * pmax + ip1, j1], mask=ok1)
        neg_centre = nl.negative(centre, mask=ok1)
        dist2 = nl.ndarray((pmax, 1), dtype=nl.float32)
        act = nl.ndarray((pmax, width), dtype=nl.float32)
        act[...] = nisa.activation_reduce(op=nl.square, data=rows, reduce_op=np.add, reduce_res=dist2[...],
                                          bias=neg_centre[...], mask=ok)
        dist2[...] = nisa.tensor_scalar(dist2[...], np.multiply, 1.0 / width, op1=np.add, operand1=eps,
                                        mask=ok)
        dist2[...] = nisa.activation(op=nl.rsqrt, data=dist2[...], mask=ok)
        moved = nisa.tensor_scalar(rows, np.subtract, centre, mask=ok)
        scaled = nisa.tensor_scalar(moved, np.multiply, dist2, mask=ok)
        nl.store(out[blk * pmax + ip, jf], value=nl.multiply(scaled, w_all, mask=ok), mask=ok)
    return out


KERNEL = anchored_scale
TOLERANCE = {"rtol": 2e-5, "atol": 1e-6}


def make_inputs(rng):
    return (rng.normal(1.0, 2.0, size=(170, 56)).astype(np.float32),
            rng.normal(size=(170, 1)).astype(np.float32),
            rng.normal(size=(56,)).astype(np.float32), 1e-3)


def reference(x, anchor, weight, eps):
    d = x.astype(np.float64) - anchor
    return (d / np.sqrt((d * d).mean(axis=1, keepdims=True) + eps) * weight).astype(np.float32)
