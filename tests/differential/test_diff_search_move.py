"""max8, nc_find_index8, nc_match_replace8, nc_stream_shuffle, nc_n_gather, local_gather and
sequence_bounds: the published examples and numbers, corner values, both executors agreeing
bit for bit, and a refusal per documented rule."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from diff_kernels import assert_agree
from nki_both import both, load, new, store
from tilecc.nki.errors import KernelError

RNG = np.random.default_rng(5)


def test_max8_find_index8_match_replace8_chain():
    def kernel(a):
        x = load(a)
        top = nisa.max8(src=x)
        idx = nisa.nc_find_index8(data=x, vals=top)
        rest = nisa.nc_match_replace8(data=x, vals=top, imm=float("-inf"))
        return store(top), store(idx), store(rest)

    a = RNG.normal(0, 1, (32, 128)).astype(np.float32)
    a[0, 5] = np.nan
    sim, ref = both(kernel, a)
    assert_agree(sim, ref, exact=True)
    top, idx, rest = sim[0], sim[1], sim[2]
    assert idx.dtype == np.uint32
    assert np.isnan(top[0, 0]) and idx[0, 0] == 0xFFFFFFFF  # NaN ranks first, never matches
    np.testing.assert_array_equal(top[1:], -np.sort(-a[1:], axis=1)[:, :8])
    np.testing.assert_array_equal(np.take_along_axis(a[1:], idx[1:].astype(np.int64), 1), top[1:])
    assert (np.isneginf(rest[1:]).sum(1) == 8).all()


def test_match_replace8_duplicate_vals_pair_backwards_as_published():
    def kernel(a, v):
        x, vals = load(a), load(v)
        out, idx = new(a.shape), new((1, 8), nl.uint32)
        nisa.nc_match_replace8(dst=out, data=x, vals=vals, imm=0.5, dst_idx=idx)
        found = new((1, 8), nl.uint16)
        nisa.nc_find_index8(dst=found, data=x, vals=vals)
        return store(out), store(idx), store(found)

    data = np.array([[1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    vals = np.array([[3, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    sim, ref = both(kernel, data, vals)
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim[1], [[2, 10, 9, 8, 7, 6, 5, 4]])
    np.testing.assert_array_equal(sim[0], [[1, 2, 0.5, 4] + [0.5] * 7])
    np.testing.assert_array_equal(sim[2], [[2, 4, 4, 4, 4, 4, 4, 4]])


def test_find_index8_absent_value_is_all_ones():
    def kernel(a, v):
        found = new((2, 8), nl.uint16)
        nisa.nc_find_index8(dst=found, data=load(a), vals=load(v))
        return store(found)

    data = np.tile(np.arange(10, dtype=np.float32), (2, 1))
    vals = np.array([[9, 0, 99, 1, 2, 3, 4, 5]] * 2, np.float32)
    sim, ref = both(kernel, data, vals)
    assert_agree(sim, ref)
    np.testing.assert_array_equal(sim[0][0], [9, 0, 0xFFFF, 1, 2, 3, 4, 5])


@pytest.mark.parametrize("call, message", [
    (lambda x: nisa.max8(dst=new((4, 8)), src=x[:, 0:7]), "8 to 16384"),
    (lambda x: nisa.max8(dst=new((4, 6)), src=x), "8 elements"),
    (lambda x: nisa.nc_find_index8(dst=new((4, 8)), data=x, vals=x[:, 0:8]), "uint16 or uint32"),
    (lambda x: nisa.nc_match_replace8(dst=new((4, 16)), data=x, vals=x[:, 0:8], imm=x), "compile-time"),
])
def test_search_refusals(call, message):
    def kernel(a):
        x = load(a)
        call(x)
        return store(x)

    with pytest.raises(KernelError, match=message):
        nki.simulate(kernel)(np.zeros((4, 16), np.float32))


@pytest.mark.parametrize("src_parts, dst_parts, mask", [
    (32, 32, [(i - 1) % 32 for i in range(32)]),
    (1, 32, [0] * 32),
    (128, 128, [(i - 1) % 32 for i in range(32)]),
    (64, 64, [255 if i % 3 == 0 else 31 - i for i in range(32)]),
])
def test_stream_shuffle_published_cases(src_parts, dst_parts, mask):
    def kernel(a, b):
        x, y = load(a), load(b)
        nisa.nc_stream_shuffle(src=x, dst=y, shuffle_mask=mask)
        return store(y)

    a = RNG.normal(0, 1, (src_parts, 16)).astype(np.float32)
    b = RNG.normal(0, 1, (dst_parts, 16)).astype(np.float32)
    sim, ref = both(kernel, a, b)
    assert_agree(sim, ref, exact=True)
    want = b.copy()
    for p in range(dst_parts):
        if mask[p % 32] != 255:
            want[p] = a[p - p % 32 + mask[p % 32]]
    np.testing.assert_array_equal(sim[0], want)


def test_stream_shuffle_in_place_and_refusals():
    def kernel(a):
        x = load(a)
        nisa.nc_stream_shuffle(dst=x, src=x, shuffle_mask=list(reversed(range(32))))
        return store(x)

    a = RNG.integers(-9, 9, (32, 4)).astype(np.int32)
    sim, ref = both(kernel, a)
    assert_agree(sim, ref)
    np.testing.assert_array_equal(sim[0], a[::-1])

    def bad(a):
        x = load(a)
        nisa.nc_stream_shuffle(dst=x, src=x, shuffle_mask=[40] * 32)
        return store(x)

    with pytest.raises(KernelError, match="0..31"):
        nki.simulate(bad)(a)


def test_sequence_bounds_published_example():
    def kernel(ids):
        return store(nisa.sequence_bounds(segment_ids=load(ids)))

    ids = np.array([[0, 1, 1, 2, 2, 2, 0, 3, 3]], np.float32)
    sim, ref = both(kernel, ids)
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim[0], [[[9, 1, 1, 3, 3, 3, 9, 7, 7],
                                            [-1, 3, 3, 6, 6, 6, -1, 9, 9]]])


def test_sequence_bounds_int32_2x_and_refusal():
    def kernel(ids):
        out = new((1, 2, ids.shape[1]), nl.int32)
        nisa.sequence_bounds(dst=out, segment_ids=load(ids))
        return store(out)

    ids = np.array([[5, 5, 0, 0, 5, 7]], np.int32)
    sim, ref = both(kernel, ids)
    assert_agree(sim, ref)
    np.testing.assert_array_equal(sim[0], [[[0, 0, 6, 6, 4, 5], [2, 2, -1, -1, 5, 6]]])
    with pytest.raises(KernelError, match="partition dimension must be 1"):
        nki.simulate(kernel)(np.zeros((2, 4), np.int32))


def test_n_gather_and_refusal():
    def kernel(a, i):
        out = new(i.shape, nl.bfloat16)
        nisa.nc_n_gather(dst=out, data=load(a), indices=load(i))
        return store(out)

    import ml_dtypes
    a = RNG.normal(0, 1, (16, 4, 8)).astype(ml_dtypes.bfloat16)
    i = RNG.integers(0, 32, (16, 5)).astype(np.uint32)
    sim, ref = both(kernel, a, i)
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim[0], np.take_along_axis(a.reshape(16, 32), i.astype(np.int64), 1))
    with pytest.raises(KernelError, match="uint32"):
        nki.simulate(kernel)(a, i.astype(np.int32))


def test_local_gather_published_example():
    def kernel(src_buffer, index):
        out = nisa.local_gather(load(src_buffer), load(index), 4, 64)
        return store(out)

    src = (RNG.random((128, 512, 4)) * 100).astype(np.float32)
    index_per_core = RNG.integers(0, 512, (16, 4)).astype(np.uint16)
    index = np.tile(index_per_core, (8, 1))
    sim, ref = both(kernel, src, index * 4)
    assert_agree(sim, ref, exact=True)
    want = np.empty((128, 64, 4), np.float32)
    for core in range(8):
        rows = slice(16 * core, 16 * core + 16)
        flat = index[rows].flatten(order="F")[:64]
        want[rows] = np.take(src[rows], flat, axis=1)
    np.testing.assert_array_equal(sim[0], want)


@pytest.mark.parametrize("per, parts, message", [(3, 16, "one of 1, 2, 4"), (4, 8, "multiple of 16")])
def test_local_gather_refusals(per, parts, message):
    def kernel(src_buffer, index):
        return store(nisa.local_gather(load(src_buffer), load(index), per))

    with pytest.raises(KernelError, match=message):
        nki.simulate(kernel)(np.zeros((parts, 8), np.float32), np.zeros((parts, 1), np.uint16))


def test_nonzero_with_count_published_example_on_core_partitions():
    def kernel(a, b):
        x, out = load(a), load(b)
        nisa.nonzero_with_count(dst=out, src=x, index_offset=16, padding_val=-1)
        return store(out)

    a = RNG.integers(0, 2, (32, 8)).astype(np.float32)
    a[0] = [0, 1, 1, 0, 0, 1, 0, 0]
    b = np.full((32, 9), 5, np.int32)
    sim, ref = both(kernel, a, b)
    assert_agree(sim, ref)
    np.testing.assert_array_equal(sim[0][0], [17, 18, 21, -1, -1, -1, -1, -1, 3])
    row = [16 + i for i in np.flatnonzero(a[16])]
    np.testing.assert_array_equal(sim[0][16], row + [-1] * (8 - len(row)) + [len(row)])
    untouched = np.ones(32, bool)
    untouched[[0, 16]] = False
    assert (sim[0][untouched] == 5).all()
    with pytest.raises(KernelError, match="one element more"):
        def bad(a):
            x = load(a)
            nisa.nonzero_with_count(dst=new(a.shape, nl.int32), src=x)
            return store(x)
        nki.simulate(bad)(a)


def test_iota_every_documented_form():
    def kernel(a):
        i_p, i_x, i_y = nl.mgrid[0:4, 0:3, 0:5]
        three = nisa.iota(7 + 2 * i_p - i_x + 10 * i_y, dtype=nl.int32)
        two = nisa.iota(nl.arange(8)[None, :] * 3 + nl.arange(4)[:, None], dtype=nl.float32)
        pairs = new((4, 2, 6), nl.int32)
        nisa.iota(dst=pairs, pattern=[[-6, 2], [1, 6]], offset=-1, channel_multiplier=100)
        return store(three), store(two), store(pairs)

    sim, ref = both(kernel, np.zeros((1, 1), np.float32))
    assert_agree(sim, ref)
    p, x, y = np.meshgrid(np.arange(4), np.arange(3), np.arange(5), indexing="ij")
    np.testing.assert_array_equal(sim[0], 7 + 2 * p - x + 10 * y)
    np.testing.assert_array_equal(sim[1], np.arange(8)[None, :] * 3 + np.arange(4)[:, None])
    p, w, x = np.meshgrid(np.arange(4), np.arange(2), np.arange(6), indexing="ij")
    np.testing.assert_array_equal(sim[2], -1 + 100 * p - 6 * w + x)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int16, np.uint8, np.int32])
def test_max8_and_find_index8_across_dtypes(dtype):
    def kernel(a):
        x = load(a)
        top = new((a.shape[0], 8), nl.float32)
        nisa.max8(dst=top, src=x)
        idx = new((a.shape[0], 8), nl.uint32)
        nisa.nc_find_index8(dst=idx, data=x, vals=top)
        return store(top), store(idx)

    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else np.finfo(dtype)
    a = RNG.integers(-100, 100, (16, 40)).astype(dtype)
    a[0, :3] = [info.max, info.min, 0]
    sim, ref = both(kernel, a)
    assert_agree(sim, ref, exact=True)
    wide = a.astype(np.float32)
    np.testing.assert_array_equal(sim[0], -np.sort(-wide, axis=1)[:, :8])
    np.testing.assert_array_equal(np.take_along_axis(wide, sim[1].astype(np.int64), 1), sim[0])
