"""Masks whose kept region is a box and the full-shape tiles masked 1.x calls return: the
KLR offsets a box gives, values on both backends against numpy, reads past a mask staying
uninitialised reads, and the located errors for what stays refused."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.errors import TileccError
from tilecc.klr import ast

RNG = np.random.default_rng(2024)
BACKENDS = ("bir", "klr")


def test_lower_bound_mask_moves_the_access_offsets():
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:64, 0:12]
        x = nl.load(a[i_p, i_f], mask=(i_f >= 3) & (i_p >= 32))
        nl.store(out[i_p, i_f], x, mask=(i_f >= 3) & (i_p >= 32))
        return out

    traced = nki.trace_kernel(kernel, np.zeros((64, 12), np.float32))
    load = traced.kernel.body[0]
    assert isinstance(load, ast.NcDmaCopy)
    assert ast.access_shape(load.src) == (32, (9,))
    assert (load.src.par_offset, load.src.free_offset) == (32, 3)
    assert (load.dst.par_offset, load.dst.free_offset) == (32, 3)


def test_masked_result_has_the_full_shape_and_is_written_only_in_the_mask():
    """A cumulative sum chunk cut by `i_f < 5` still returns a [4, 8] tile: indexing column 7
    traces, and storing it stores undefined data on both backends."""
    def kernel(a):
        out = nl.ndarray((4, 1), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:4, 0:8]
        x = nl.load(a)
        ones = nl.load(a)
        scan = nisa.tensor_tensor_scan(x, ones, 0.0, nl.add, nl.multiply, mask=(i_f < 5))
        assert scan.shape == (4, 8)
        nl.store(out, scan[:, 7:8])
        return out

    a = RNG.normal(size=(4, 8)).astype(np.float32)
    for backend in ("bir", "klr"):
        with pytest.raises(TileccError, match=r"nl.store: .*undefined data reaches HBM tensor 'out' "
                                              r"element \[0, 0\]; .*'scan' element \[0, 7\] was never"):
            nki.simulate(kernel, backend=backend)(a)


def test_masked_result_read_inside_the_mask_and_after_a_full_write():
    """Inside the mask the values are the instruction's; once an unmasked instruction has
    written the whole tile, its last column reads normally."""
    def kernel(a):
        out = nl.ndarray((4, 2), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:4, 0:8]
        x = nl.load(a)
        doubled = nisa.tensor_scalar(x, nl.multiply, 2.0, mask=(i_f < 5))
        nl.store(out[:, 0:1], doubled[:, 4:5])
        doubled[...] = nl.negative(x)
        nl.store(out[:, 1:2], doubled[:, 7:8])
        return out

    a = RNG.normal(size=(4, 8)).astype(np.float32)
    for backend in BACKENDS:
        got = nki.simulate(kernel, backend=backend)(a)
        np.testing.assert_array_equal(got, np.stack([2 * a[:, 4], -a[:, 7]], axis=1))


def test_unmasked_ops_on_a_partial_tile_compute_on_the_box_it_holds():
    """rows 0..69 of 128 loaded; unmasked arithmetic and a row sum compute on those rows only
    (NKI computes garbage rows nobody reads; the simulator would call them uninitialised)."""
    a = RNG.normal(size=(70, 6)).astype(np.float32)
    a[10, 2], a[11, 0] = -0.0, np.nan

    def kernel(a):
        out = nl.ndarray((70, 1), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:6]
        keep = i_p < 70
        x = nl.load(a[i_p, i_f], mask=keep)
        total = nl.sum(x * x - 1.0, axis=1)
        assert total.shape == (128, 1)
        nl.store(out[i_p, nl.arange(1)[None, :]], total, mask=keep)
        return out

    for backend in BACKENDS:
        got = nki.simulate(kernel, backend=backend)(a)
        np.testing.assert_allclose(got, (a * a - 1.0).sum(axis=1, keepdims=True), rtol=1e-5)


def test_compute_box_off_the_partition_start_rule_is_a_located_error():
    def kernel(a):
        out = nl.ndarray((128, 6), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:6]
        x = nl.load(a[i_p, i_f], mask=(i_p >= 1) & (i_p < 70))
        nl.store(out[i_p, i_f], nl.exp(x), mask=(i_p >= 1))  # <-
        return out

    with pytest.raises(nki.KernelError, match="69 partitions of \\w+ starts at partition 1; it must "
                                              "start at 0 .*compute engines' start rule") as info:
        nki.trace_kernel(kernel, np.zeros((128, 6), np.float32))
    assert "# <-" in info.value.source_line


def test_spmd_partial_block_rows_on_both_backends():
    def kernel(a):
        n, w = a.shape
        out = nl.ndarray((n, w), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:w]
        for blk in nl.affine_range(2):
            base = blk * 128
            keep = (i_p + base < n) & (i_f >= 1)
            x = nl.load(a[i_p + base, i_f], mask=keep)
            y = nisa.activation(nl.exp, x, mask=keep)
            nl.store(out[i_p + base, i_f], nl.subtract(y, x), mask=keep)
            nl.store(out[i_p + base, i_f], nl.load(a[i_p + base, i_f], mask=(i_p + base < n)),
                     mask=(i_p + base < n) & (i_f < 1))
        return out

    a = RNG.normal(size=(200, 5)).astype(np.float32)
    a[150, 3] = np.inf
    with np.errstate(invalid="ignore"):
        want = np.exp(a) - a   # inf - inf: NaN on both sides
    want[:, 0] = a[:, 0]
    for backend in BACKENDS:
        got = nki.simulate(kernel, backend=backend)(a)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mask_text", ["i_p + i_f < 8", "i_f - i_p >= 0", "(i_p < 8) & (i_p - i_f > 2)"])
def test_masks_that_are_not_a_box_name_the_mask(mask_text):
    def kernel(a):
        i_p, i_f = nl.mgrid[0:16, 0:16]
        x = nl.load(a)
        nl.exp(x, mask=eval(mask_text))  # <-
        return a

    with pytest.raises(nki.KernelError, match=r"nl.exp: the mask .* keeps a region that is not a box") as info:
        nki.trace_kernel(kernel, np.zeros((16, 16), np.float32))
    assert "# <-" in info.value.source_line


def test_dma_copy_box_may_start_on_any_partition():
    a = RNG.normal(size=(40, 3)).astype(np.float32)

    def kernel(a):
        out = nl.ndarray((40, 3), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:40, 0:3]
        x = nl.load(a[i_p, i_f], mask=(i_p >= 7) & (i_p <= 30))
        nl.store(out[i_p, i_f], x, mask=(i_p >= 7) & (i_p <= 30))
        nl.store(out[i_p, i_f], nl.load(a), mask=(i_p < 7))
        nl.store(out[i_p, i_f], nl.load(a), mask=(i_p > 30))
        return out

    for backend in BACKENDS:
        np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(a), a)


def test_memset_and_iota_write_only_their_box_of_a_full_tile():
    def kernel(a):
        out = nl.ndarray((64, 16), dtype=nl.int32, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:64, 0:16]
        fill = nisa.memset((64, 16), -7, nl.int32, mask=(i_f >= 12))
        index = nisa.iota(100 - 16 * i_p + i_f, dtype=nl.int32, mask=(i_f < 12) & (i_p >= 32))
        assert fill.shape == index.shape == (64, 16)
        nl.store(out[i_p, i_f], fill, mask=(i_f >= 12))
        nl.store(out[i_p, i_f], index, mask=(i_f < 12) & (i_p >= 32))
        nl.store(out[i_p, i_f], nl.load(a), mask=(i_f < 12) & (i_p < 32))
        return out

    a = RNG.integers(-2**31, 2**31 - 1, size=(64, 16)).astype(np.int32)
    p, f = np.mgrid[0:64, 0:16]
    want = np.where(f >= 12, -7, np.where(p >= 32, 100 - 16 * p + f, a)).astype(np.int32)
    for backend in BACKENDS:
        np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(a), want)
