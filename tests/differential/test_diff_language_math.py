"""nl.where, floor / ceil / trunc, cos / tan, softmax, rms_norm, all, abs_max / abs_min,
static_cast and the buffer predicates: numpy goldens (the published examples among them),
corner values, both executors agreeing."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.language as nl
from diff_kernels import assert_agree
from nki_both import both, load, store
from tilecc.nki.errors import KernelError

RNG = np.random.default_rng(21)
CORNERS = np.array([0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.0, -2.0, 0.49999997, -0.99999994,
                    8388607.5, -8388607.5, 1e30, -1e30, np.inf, -np.inf, np.nan, 3.0], np.float32)


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc"])
def test_rounding_matches_numpy_on_corners(name):
    def kernel(a):
        return store(getattr(nl, name)(load(a)))

    a = np.concatenate([CORNERS, RNG.normal(0, 50, 110).astype(np.float32)]).reshape(8, 16)
    sim, ref = both(kernel, a)
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim[0], getattr(np, name)(a) + np.float32(0.0))


def test_rounding_bf16_keeps_dtype():
    def kernel(a):
        return store(nl.floor(load(a)))

    a = RNG.normal(0, 9, (4, 8)).astype(ml_dtypes.bfloat16)
    got = nki.simulate(kernel)(a)
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got.astype(np.float32), np.floor(a.astype(np.float32)))


def test_cos_tan_match_numpy():
    def kernel(a):
        x = load(a)
        return store(nl.cos(x)), store(nl.tan(x))

    # away from tan's poles: cos(x) = sin(x + pi/2) rounds the shifted argument
    a = RNG.uniform(-1.4, 1.4, (16, 32)).astype(np.float32)
    sim, ref = both(kernel, a)
    assert_agree(sim, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sim[0], np.cos(a), atol=2e-6)
    np.testing.assert_allclose(sim[1], np.tan(a), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("cond_value, want", [(1.0, 10.0), (0.0, 5.0)])
def test_where_published_examples(cond_value, want):
    def kernel(a):
        cond = nl.full((128, 512), cond_value, dtype=nl.float32, buffer=nl.sbuf)
        x = nl.full((128, 512), 10.0, dtype=nl.float32, buffer=nl.sbuf)
        y = nl.full((128, 512), 5.0, dtype=nl.float32, buffer=nl.sbuf)
        return store(nl.where(cond, x, y))

    sim, ref = both(kernel, np.zeros((1, 1), np.float32))
    assert_agree(sim, ref, exact=True)
    assert (sim[0] == want).all()


def test_where_mixed_tiles_scalars_and_masks():
    def kernel(c, x, y):
        ct, xt, yt = load(c), load(x), load(y)
        return (store(nl.where(ct, xt, yt)), store(nl.where(nl.greater(xt, 0.0), xt, 0.0)),
                store(nl.where(ct, -1.0, yt, dtype=nl.bfloat16)))

    c = RNG.integers(0, 2, (32, 20)).astype(np.uint8)
    x = RNG.normal(0, 1, (32, 20)).astype(np.float32)
    y = RNG.normal(0, 1, (32, 20)).astype(np.float32)
    sim, ref = both(kernel, c, x, y)
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim[0], np.where(c != 0, x, y))
    np.testing.assert_array_equal(sim[1], np.maximum(x, 0.0))
    np.testing.assert_array_equal(sim[2], np.where(c != 0, -1.0, y).astype(ml_dtypes.bfloat16))


def test_where_refuses_other_shapes():
    def kernel(c, x):
        return store(nl.where(load(c), load(x), 0.0))

    with pytest.raises(KernelError, match="same shape"):
        nki.simulate(kernel)(np.ones((4, 4), np.uint8), np.ones((4, 5), np.float32))


def test_softmax_rms_norm_all_abs_pairs():
    def kernel(a, w):
        x, wt = load(a), load(w)
        return (store(nl.softmax(x, axis=1)), store(nl.rms_norm(x, wt, axis=1, n=a.shape[1])),
                store(nl.all(x, axis=1)), store(nl.abs_max(x, wt)), store(nl.abs_min(x, wt)),
                store(nl.static_cast(x, nl.bfloat16)))

    a = RNG.normal(0, 3, (16, 64)).astype(np.float32)
    a[0, 3] = 0.0
    w = RNG.normal(0, 1, (16, 64)).astype(np.float32)
    sim, ref = both(kernel, a, w)
    assert_agree(sim, ref, rtol=1e-5, atol=1e-6)
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(sim[0], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    rms = np.sqrt((a * a).mean(1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(sim[1], a / rms * w, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(sim[2].reshape(-1), (a != 0).all(1))
    np.testing.assert_array_equal(sim[3], np.maximum(np.abs(a), np.abs(w)))
    np.testing.assert_array_equal(sim[4], np.minimum(np.abs(a), np.abs(w)))
    np.testing.assert_array_equal(sim[5], a.astype(ml_dtypes.bfloat16))


def test_rms_norm_published_example_and_buffer_predicates():
    def kernel(a):
        x = nl.full((128, 512), 2.0, dtype=nl.float32, buffer=nl.sbuf)
        w = nl.full((128, 512), 1.0, dtype=nl.float32, buffer=nl.sbuf)
        assert nl.is_sbuf(x) and nl.is_on_chip(nl.sbuf) and not nl.is_psum(x) and nl.is_hbm(a)
        return store(nl.rms_norm(x, w, axis=1, n=512))

    sim, ref = both(kernel, np.zeros((1, 1), np.float32))
    assert_agree(sim, ref)
    np.testing.assert_allclose(sim[0], 1.0, rtol=1e-6)


def test_static_cast_of_a_host_array_prepares_kernel_inputs():
    host = np.array([[1.0, 2.5, 1e-3]], np.float64)
    got = nl.static_cast(host, nl.bfloat16)
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got, host.astype(ml_dtypes.bfloat16))


def test_gather_flattened_takes_along_each_partition():
    def kernel(a, i):
        return store(nl.gather_flattened(data=load(a), indices=load(i)))

    a = RNG.normal(0, 1, (32, 64)).astype(np.float32)
    idx = (np.arange(10)[None, :] * 5 + np.arange(32)[:, None]).astype(np.int32) % 64
    sim, ref = both(kernel, a, idx)
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim[0], np.take_along_axis(a, idx.astype(np.int64), axis=-1))


def test_finfo_limits_and_refusal():
    assert nl.finfo(nl.float32).min == np.finfo(np.float32).min
    assert float(nl.finfo(nl.bfloat16).max) == float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    with pytest.raises(KernelError, match="not a float dtype"):
        nl.finfo(nl.int32)
