"""bn_stats / bn_aggr, select_reduce, tensor_copy_predicated, affine_select, range_select:
the published examples' numpy goldens, corner values, both NKI forms, the simulator and the
KLR interpreter held together, and a refusal per documented rule."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from diff_kernels import assert_agree
from nki_both import both, load, new, store
from tilecc.nki.errors import KernelError

RNG = np.random.default_rng(12)
R = nisa.reduce_cmd


def stats_kernel(a):
    stats = nisa.bn_stats(nl.load(a))
    mv = nisa.bn_aggr(stats)
    return store(stats, "stats"), store(mv, "mv")


@pytest.mark.parametrize("shape", [(128, 128), (7, 1), (3, 5), (32, 512)])
def test_bn_stats_groups_and_aggr_match_numpy(shape):
    a = (RNG.random(shape, dtype=np.float32) * 100).astype(np.float32)
    sim, ref = both(stats_kernel, a)
    assert_agree(sim, ref, rtol=2e-5, atol=1e-4)
    stats = sim[0]
    even, odd = a[:, 0::2], a[:, 1::2]
    np.testing.assert_array_equal(stats[:, 0], even.shape[1])
    np.testing.assert_array_equal(stats[:, 3], odd.shape[1])
    np.testing.assert_allclose(stats[:, 1], even.mean(1), rtol=1e-5)
    np.testing.assert_allclose(stats[:, 2], even.var(1) * even.shape[1], rtol=1e-4, atol=1e-3)
    if odd.shape[1] == 0:
        np.testing.assert_array_equal(stats[:, 4:], 0.0)
    np.testing.assert_allclose(sim[1][:, 0], a.mean(1), rtol=1e-5)
    np.testing.assert_allclose(sim[1][:, 1], a.var(1), rtol=1e-4, atol=1e-3)


def test_bn_stats_over_1024_elements_as_the_published_example():
    def kernel(b_tensor):
        b = nl.load(b_tensor)
        stats_b = nl.ndarray((128, 6 * 2), dtype=nl.float32)
        bn_tile = nl.tile_size.bn_stats_fmax
        ix, iy = nl.mgrid[0:128, 0:bn_tile]
        iz, iw = nl.mgrid[0:128, 0:6]
        for i in range(1024 // bn_tile):
            stats_b[iz, i * 6 + iw] = nisa.bn_stats(b[ix, i * bn_tile + iy], dtype=nl.float32)
        mean_var_b = nisa.bn_aggr(stats_b)
        return store(mean_var_b)

    b = (RNG.random((128, 1024), dtype=np.float32) * 100).astype(np.float32)
    sim, ref = both(kernel, b)
    assert_agree(sim, ref, rtol=2e-5, atol=1e-4)
    mv = sim[0]
    assert np.allclose(mv[:, 0], b.mean(1)) and np.allclose(mv[:, 1], b.var(1))


def test_bn_stats_specials_and_bf16_agree():
    a = RNG.normal(0, 4, (16, 9)).astype(np.float32)
    a[0, 0], a[1, 3], a[2, 4] = np.nan, np.inf, -np.inf
    sim, ref = both(stats_kernel, a.astype(ml_dtypes.bfloat16))
    assert_agree(sim, ref, rtol=1e-5, atol=1e-4)
    assert np.isnan(sim[1][0, 1].astype(np.float32))


def test_bn_2x_dst_form():
    def kernel(a):
        x = load(a)
        stats, mv = new((a.shape[0], 6)), new((a.shape[0], 2), nl.bfloat16)
        nisa.bn_stats(dst=stats, data=x)
        nisa.bn_aggr(dst=mv, data=stats)
        return store(mv)

    a = RNG.normal(3, 2, (64, 100)).astype(np.float32)
    got = nki.simulate(kernel)(a)
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(got.astype(np.float32), np.stack([a.mean(1), a.var(1)], 1), rtol=1e-2)


@pytest.mark.parametrize("body, message", [
    (lambda x: nisa.bn_stats(dst=new((128, 6)), data=x), "at most 512"),
    (lambda x: nisa.bn_stats(dst=new((128, 5)), data=x[:, 0:8]), "6 elements"),
    (lambda x: nisa.bn_aggr(dst=new((128, 2)), data=x[:, 0:7]), "multiple of 3"),
    (lambda x: nisa.bn_aggr(dst=new((128, 3)), data=x[:, 0:6]), "2 elements"),
    (lambda x: nisa.bn_stats(dst=new((64, 6)), data=x[:, 0:8]), "partitions"),
])
def test_bn_refusals(body, message):
    def kernel(a):
        body(load(a))
        return store(load(a))

    with pytest.raises(KernelError, match=message):
        nki.simulate(kernel)(np.zeros((128, 600), np.float32))


def select_kernel(pred, x, col, *, reverse=False, tile_false=False):
    def kernel(p, a, c):
        pt, at, ct = load(p), load(a), load(c)
        out, red = new(a.shape), new((a.shape[0], 1))
        nisa.select_reduce(dst=out, predicate=pt, on_true=at, on_false=ct if tile_false else -7.5,
                           reduce_res=red, reduce_cmd=R.reset_reduce, reverse_pred=reverse)
        return store(out, "out"), store(red, "red")
    return both(kernel, pred, x, col)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("tile_false", [False, True])
@pytest.mark.parametrize("pdtype", [np.uint8, np.int16])
def test_select_reduce_matches_numpy(reverse, tile_false, pdtype):
    x = RNG.normal(0, 3, (32, 40)).astype(np.float32)
    x[0, 1], x[1, 2] = np.inf, -0.0
    pred = RNG.integers(0, 3, x.shape).astype(pdtype)
    pred[2] = 0
    col = RNG.normal(0, 1, (32, 1)).astype(np.float32)
    sim, ref = select_kernel(pred, x, col, reverse=reverse, tile_false=tile_false)
    assert_agree(sim, ref, exact=True)
    keep = (pred == 0) if reverse else (pred != 0)
    want = np.where(keep, x, col if tile_false else np.float32(-7.5))
    np.testing.assert_array_equal(sim[0], want)
    np.testing.assert_array_equal(sim[1], want.max(1, keepdims=True))


def test_select_reduce_accumulates_across_calls():
    def kernel(p, a):
        pt, at = load(p), load(a)
        out, red = new(a.shape), new((a.shape[0], 1))
        half = a.shape[1] // 2
        nisa.select_reduce(dst=out[:, 0:half], predicate=pt[:, 0:half], on_true=at[:, 0:half],
                           on_false=-100.0, reduce_cmd=R.reset_reduce)
        nisa.select_reduce(dst=out[:, half:], predicate=pt[:, half:], on_true=at[:, half:],
                           on_false=-100.0, reduce_res=red, reduce_cmd=R.reduce)
        return store(red)

    x = RNG.normal(0, 3, (16, 20)).astype(np.float32)
    pred = RNG.integers(0, 2, x.shape).astype(np.uint8)
    sim, ref = both(kernel, pred, x)
    assert_agree(sim, ref, exact=True)
    red = sim[0]
    np.testing.assert_array_equal(red[:, 0], np.where(pred != 0, x, -100.0).max(1))


@pytest.mark.parametrize("call, message", [
    (lambda p, a, d: nisa.select_reduce(dst=d, predicate=a, on_true=a, on_false=0.0), "integer dtype"),
    (lambda p, a, d: nisa.select_reduce(dst=d, predicate=p, on_true=a, on_false=0.0,
                                        reduce_op=nl.add), "only nl.maximum"),
    (lambda p, a, d: nisa.select_reduce(dst=d, predicate=p, on_true=a, on_false=0.0,
                                        reduce_res=new((8, 2))), r"\[8, 1\]"),
    (lambda p, a, d: nisa.select_reduce(dst=d, predicate=p, on_true=a, on_false=a), "scalar"),
])
def test_select_reduce_refusals(call, message):
    def kernel(p, a):
        pt, at = load(p), load(a)
        d = new(a.shape)
        call(pt, at, d)
        return store(d)

    with pytest.raises(KernelError, match=message):
        nki.simulate(kernel)(np.ones((8, 4), np.uint8), np.ones((8, 4), np.float32))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, ml_dtypes.bfloat16])
def test_copy_predicated_keeps_unselected(reverse, dtype):
    def kernel(p, a, b):
        pt, at, bt = load(p), load(a), load(b)
        nisa.tensor_copy_predicated(dst=bt, src=at, predicate=pt, reverse_pred=reverse)
        return store(bt)

    a = RNG.integers(-50, 50, (24, 12)).astype(dtype)
    b = RNG.integers(-50, 50, (24, 12)).astype(dtype)
    pred = RNG.integers(0, 2, (24, 12)).astype(np.uint32)
    sim, ref = both(kernel, pred, a, b)
    assert_agree(sim, ref, exact=True)
    keep = (pred == 0) if reverse else (pred != 0)
    np.testing.assert_array_equal(sim[0], np.where(keep, a, b))


def test_copy_predicated_scalar_src_and_float_predicate():
    def kernel(p, b):
        pt, bt = load(p), load(b)
        nisa.tensor_copy_predicated(dst=bt, src=9.0, predicate=pt)
        return store(bt)

    b = RNG.normal(0, 1, (8, 8)).astype(np.float32)
    pred = (RNG.random((8, 8)) > 0.5).astype(np.float32)
    sim, ref = both(kernel, pred, b)
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim[0], np.where(pred != 0, 9.0, b))


def test_affine_select_published_1x_example():
    def kernel(a_tensor):
        ix, iy = nl.mgrid[0:128, 0:128]
        a = nl.load(a_tensor[ix, iy])
        b = nisa.affine_select(pred=(iy < ix), on_true_tile=a[ix, iy], on_false_value=nl.fp32.min)
        return store(b)

    a = (RNG.random((128, 128), dtype=np.float32) * 100).astype(np.float32)
    sim, ref = both(kernel, a)
    assert_agree(sim, ref, exact=True)
    golden = a.copy()
    golden[np.triu_indices_from(golden)] = nl.fp32.min
    np.testing.assert_array_equal(sim[0], golden)


@pytest.mark.parametrize("cmp", [nl.equal, nl.not_equal, nl.greater, nl.greater_equal, nl.less,
                                 nl.less_equal])
def test_affine_select_2x_pattern(cmp):
    def kernel(a):
        x = load(a)
        d = new(a.shape)
        nisa.affine_select(dst=d, pattern=[[-1, 4], [2, 6]], channel_multiplier=3, on_true_tile=x,
                           on_false_value=-1.0, cmp_op=cmp, offset=-5)
        return store(d)

    a = RNG.normal(0, 1, (8, 4, 6)).astype(np.float32)
    sim, ref = both(kernel, a)
    assert_agree(sim, ref, exact=True)
    p, w, x = np.meshgrid(np.arange(8), np.arange(4), np.arange(6), indexing="ij")
    value = -5 + 3 * p - w + 2 * x
    ops = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
           "greater_equal": np.greater_equal, "less": np.less, "less_equal": np.less_equal}
    want = np.where(ops[cmp.name](value, 0), a, -1.0)
    np.testing.assert_array_equal(sim[0], want)


def test_affine_select_refusals():
    def kernel(a):
        x = load(a)
        nisa.affine_select(dst=new(a.shape), pattern=[[1, 5]], channel_multiplier=0, on_true_tile=x,
                           on_false_value=0.0)
        return store(x)

    with pytest.raises(KernelError, match="covers 5 elements"):
        nki.simulate(kernel)(np.zeros((4, 6), np.float32))


@pytest.mark.parametrize("ops", [(nl.greater_equal, nl.less), (nl.greater, nl.less_equal),
                                 (nl.equal, nl.less_equal)])
def test_range_select_published_numpy_equivalent(ops):
    def kernel(a, lo, hi):
        x, l0, h1 = load(a), load(lo), load(hi)
        out, red = new(a.shape), new((a.shape[0], 1))
        nisa.range_select(dst=out, on_true_tile=x, comp_op0=ops[0], comp_op1=ops[1], bound0=l0,
                          bound1=h1, reduce_res=red, range_start=3)
        return store(out, "out"), store(red, "red")

    a = RNG.normal(0, 1, (16, 32)).astype(np.float32)
    lo = RNG.integers(0, 20, (16, 1)).astype(np.float32)
    hi = lo + RNG.integers(0, 15, (16, 1)).astype(np.float32)
    sim, ref = both(kernel, a, lo, hi)
    assert_agree(sim, ref, exact=True)
    fns = {"greater_equal": np.greater_equal, "less": np.less, "greater": np.greater,
           "less_equal": np.less_equal, "equal": np.equal}
    idx = 3 + np.arange(32, dtype=np.float32)[None, :]
    mask = fns[ops[0].name](idx, lo) & fns[ops[1].name](idx, hi)
    want = np.where(mask, a, nl.fp32.min).astype(np.float32)
    np.testing.assert_array_equal(sim[0], want)
    np.testing.assert_array_equal(sim[1], want.max(1, keepdims=True))


def test_range_select_1x_form_and_refusal():
    def kernel(a, lo, hi):
        x, l0, h1 = load(a), load(lo), load(hi)
        out = nisa.range_select(on_true_tile=x, comp_op0=nl.greater_equal, comp_op1=nl.less,
                                bound0=l0, bound1=h1)
        return store(out)

    a = RNG.normal(0, 1, (4, 8)).astype(np.float32)
    lo, hi = np.full((4, 1), 2, np.float32), np.full((4, 1), 5, np.float32)
    got = nki.simulate(kernel)(a, lo, hi)
    np.testing.assert_array_equal(got[:, 2:5], a[:, 2:5])
    assert (got[:, :2] == nl.fp32.min).all()

    def bad(a, lo, hi):
        x, l0, h1 = load(a), load(lo), load(hi)
        nisa.range_select(dst=new(a.shape), on_true_tile=x, comp_op0=nl.add, comp_op1=nl.less,
                          bound0=l0, bound1=h1)
        return store(x)

    with pytest.raises(KernelError, match="comp_op0=nl.add is not allowed"):
        nki.simulate(bad)(a, lo, hi)


@pytest.mark.parametrize("reduce_op", [np.max, np.amax, nl.max, nl.maximum])
def test_reduce_op_spellings_kernels_use(reduce_op):
    def kernel(p, a):
        pt, at = load(p), load(a)
        out, red = new(a.shape), new((a.shape[0], 1))
        nisa.select_reduce(dst=out, predicate=pt, on_true=at, on_false=0.0, reduce_res=red,
                           reduce_cmd=R.reset_reduce, reduce_op=reduce_op)
        return store(red)

    a = RNG.normal(0, 1, (8, 16)).astype(np.float32)
    got = nki.simulate(kernel)(np.ones((8, 16), np.uint8), a)
    np.testing.assert_array_equal(got[:, 0], a.max(1))


def test_1x_keywords_of_by_reference_instructions():
    def kernel(p, a):
        pt, at = load(p), load(a)
        out = new(a.shape)
        nisa.select_reduce(dst=out, predicate=pt, on_true=at, on_false=1.0, mask=None, dtype=nl.float32)
        nisa.tensor_copy_predicated(src=at, dst=out, predicate=pt, mask=None)
        return store(out)

    a = RNG.normal(0, 1, (8, 16)).astype(np.float32)
    got = nki.simulate(kernel)(np.ones((8, 16), np.uint8), a)
    np.testing.assert_array_equal(got, a)

    def bad(p, a):
        pt, at = load(p), load(a)
        nisa.select_reduce(dst=new(a.shape), predicate=pt, on_true=at, on_false=1.0, dtype=nl.bfloat16)
        return store(at)

    with pytest.raises(KernelError, match="differs from dst's dtype"):
        nki.simulate(bad)(np.ones((8, 16), np.uint8), a)
