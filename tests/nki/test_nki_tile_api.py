"""NKI's tile-level API: each call is one instruction of the kind the module docstring of
tilecc/nki/tile_ops.py names, results are named after their variables, and the values agree
with numpy through the whole pipeline."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.language as nl
from tilecc.klr import ast

RNG = np.random.default_rng(77)
X = RNG.normal(0.0, 2.0, size=(128, 16)).astype(np.float32)
Y = RNG.uniform(0.5, 2.0, size=(128, 16)).astype(np.float32)


def stored(tile):
    out = nl.ndarray(tile.shape, dtype=tile.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=tile)
    return out


def body(kernel, *arrays):
    return nki.trace_kernel(kernel, *arrays).kernel.body


def test_each_call_is_one_instruction():
    def kernel(a, b):
        x, y = nl.load(a), nl.load(b)
        e = nl.exp(x)
        s = x + y
        d = 1.0 - x
        col = nl.sum(x, axis=1)
        q = x / col
        m = nl.mean(x, axis=[1], keepdims=True)
        lt = x < y
        neg = -x
        return stored(q)

    load_a, load_b, e, s, d, col, q, m_sum, m_scale, lt, neg, store = body(kernel, X, Y)
    assert isinstance(e, ast.NcActivate) and e.activation_func is ast.ActivationFunc.exp
    assert isinstance(s, ast.TensorTensor) and s.op is ast.AluOp.add
    assert isinstance(d, ast.TensorScalar) and (d.op0, d.imm0, d.reverse) == (
        ast.AluOp.subtract, ast.Immediate(1.0), ast.TensorScalarReverseOps.first)
    assert isinstance(col, ast.TensorReduce) and ast.access_shape(col.dst) == (128, (1,))
    assert isinstance(q, ast.TensorScalar) and q.op0 is ast.AluOp.divide
    assert ast.access_tensor(q.imm0).name == "col"
    assert isinstance(m_sum, ast.TensorReduce) and m_sum.keepdims
    assert isinstance(m_scale, ast.TensorScalar) and m_scale.imm0 == ast.Immediate(1.0 / 16)
    assert isinstance(lt, ast.TensorTensor) and ast.access_tensor(lt.dst).dtype is ast.Dtype.uint8
    assert isinstance(neg, ast.TensorScalar) and neg.imm0 == ast.Immediate(-1.0)
    assert [ast.access_tensor(s.dst).name for s in (e, s, d, col, q)] == ["e", "s", "d", "col", "q"]


def test_values_through_the_pipeline():
    def kernel(a, b):
        x, y = nl.load(a), nl.load(b)
        r = nl.maximum(x, 0.5) * y - nl.exp(x) / nl.sum(y, axis=1)
        big = nl.max(x, axis=1, keepdims=True)
        return stored(r), stored(big), stored(nl.greater(x, y, dtype=nl.float32))

    r, big, gt = nki.simulate(kernel)(X, Y)
    want = np.maximum(X, 0.5) * Y - np.exp(X) / Y.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(r, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(big, X.max(axis=1, keepdims=True))
    np.testing.assert_array_equal(gt, (X > Y).astype(np.float32))


def test_partition_broadcast_copies_one_partition():
    row = RNG.normal(size=(16,)).astype(np.float32)

    def kernel(v):
        one = nl.load(v.reshape((1, 16)))
        return stored(one.broadcast_to((64, 16)))

    load, copy, _ = body(kernel, row)
    assert isinstance(copy, ast.NcDmaCopy)
    assert copy.src.par_num == 1 and copy.src.pattern[0] == ast.APPair(0, 64)
    np.testing.assert_array_equal(nki.simulate(kernel)(row), np.tile(row, (64, 1)))


def test_masks_that_hold_everywhere_are_accepted():
    def kernel(a):
        ix, iy = nl.mgrid[0:128, 0:16]
        t = nl.load(a[ix, iy], mask=(ix < 128) & (iy >= 0))
        return stored(nl.exp(t, mask=(ix <= 127)))

    np.testing.assert_allclose(nki.simulate(kernel)(X), np.exp(X), rtol=1e-6)


@pytest.mark.parametrize("mask_text, message", [
    ("ix + iy < 100", r"keeps a region that is not a box"),
    ("ix < 1.5", r"a mask compares an nl.arange / nl.mgrid index with an int"),
    ("'all'", r"mask must be a comparison of nl.arange / nl.mgrid indices"),
])
def test_masks_tilecc_cannot_express_are_errors(mask_text, message):
    def kernel(a):
        ix, iy = nl.mgrid[0:128, 0:16]
        return stored(nl.load(a[ix, iy], mask=eval(mask_text)))

    with pytest.raises(nki.KernelError, match=message):
        body(kernel, X)


def test_mgrid_axes_a_access_does_not_use_are_dropped():
    def kernel(v):
        ix, iw, iy = nl.mgrid[0:128, 0:1, 0:16]
        return stored(nl.load(v.reshape((1, 16))[iw, iy]))

    load, _ = body(kernel, X[0])
    assert ast.access_shape(load.dst) == (1, (16,))


def test_masks_cut_a_partial_last_tile():
    """Rows 0..199 in tiles of 128: the second tile keeps 72 partitions, as NKI's masks do."""
    rows = RNG.normal(size=(200, 24)).astype(np.float32)

    def kernel(a):
        n = a.shape[0]
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        ix, iy = nl.mgrid[0:128, 0:24]
        for i in nl.affine_range((n + 127) // 128):
            t = nl.load(a[i * 128 + ix, iy], mask=(i * 128 + ix < n))
            peak = nl.max(t, axis=1, keepdims=True, mask=(i * 128 + ix < n))
            shifted = nl.subtract(t, peak, mask=(i * 128 + ix < n))
            nl.store(out[i * 128 + ix, iy], value=shifted, mask=(i * 128 + ix < n))
        return out

    traced = nki.trace_kernel(kernel, rows)
    last_load = [s for s in traced.kernel.body if isinstance(s, ast.NcDmaCopy)][-2]
    assert ast.access_shape(last_load.dst) == (72, (24,))
    for backend in ("bir", "klr"):
        got = nki.simulate(kernel, backend=backend)(rows)
        np.testing.assert_array_equal(got, rows - rows.max(axis=1, keepdims=True))

