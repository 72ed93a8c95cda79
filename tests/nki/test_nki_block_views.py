"""Views of on-chip tensors the published kernels pass around: a block view keeping the
dims before nl.par_dim (`buf[h]` of a (H, T, par_dim(P), F) buffer), a reshape of a tile's
free dims, and tensor.ap() on a reshaped or row-sliced tensor; simulator and KLR interpreter
against numpy, and the refusals as located KernelErrors."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki import KernelError
from test_nki_tensor_engine import both


def _fill(dst, src, tiles):
    for t in nl.affine_range(tiles):
        dst[t, :, :] = nl.load(src[t])


@nki.jit
def block_views(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((x.shape[0], x.shape[1], nl.par_dim(x.shape[2]), x.shape[3]), dtype=x.dtype)
    for h in nl.affine_range(x.shape[0]):
        _fill(buf[h], x[h], x.shape[1])
    for h in nl.affine_range(x.shape[0]):
        for t in nl.affine_range(x.shape[1]):
            nl.store(out[h, t], buf[h, t] * 2.0)
    return out


def test_block_view_keeps_the_dims_before_par_dim():
    x = np.arange(2 * 3 * 64 * 8, dtype=np.float32).reshape(2, 3, 64, 8)
    np.testing.assert_array_equal(both(block_views, x), 2 * x)


@nki.jit
def grouped_max(x):
    """Per row, the max of each group of 4 consecutive elements (nki-library's fold idiom)."""
    rows, n = x.shape
    out = nl.ndarray((rows, n // 4), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.ndarray((rows, n), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=x)
    best = nl.ndarray((rows, n // 4), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=best, op=nl.maximum, data=tile.reshape((rows, n // 4, 4)), axis=2)
    flat = nl.ndarray((rows, n // 4), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=flat.reshape((rows, n // 8, 2)), src=best.reshape((rows, n // 8, 2)))
    nisa.dma_copy(dst=out, src=flat)
    return out


def test_reshape_of_a_tile_regroups_its_free_dims():
    x = np.random.default_rng(3).normal(size=(32, 64)).astype(np.float32)
    np.testing.assert_array_equal(both(grouped_max, x), x.reshape(32, 16, 4).max(-1))


@nki.jit
def strided_rows(x):
    """Every other element of rows 2..5 of x, read through .ap() on a reshape and a row range."""
    out = nl.ndarray((4, x.shape[1] // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.ndarray((4, x.shape[1] // 2), dtype=x.dtype, buffer=nl.sbuf)
    flat = x.reshape((x.shape[0] * x.shape[1],))
    row = x.shape[1]
    nisa.dma_copy(dst=tile[0:2, :], src=x[2:4, :].ap([[row, 2], [2, row // 2]], dtype=x.dtype))
    nisa.dma_copy(dst=tile[2:4, :], src=flat.ap([[row, 2], [2, row // 2]], offset=4 * row))
    nisa.dma_copy(dst=out, src=tile)
    return out


def test_ap_on_a_reshape_and_on_a_row_range():
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    np.testing.assert_array_equal(both(strided_rows, x), x[2:6, ::2])


def _reshape_split_partitions(x):
    tile = nl.load(x)
    tile.reshape((x.shape[0] // 2, 2 * x.shape[1]))


def _ap_inside_a_row(x):
    x[:, 0:4].ap([[x.shape[1], 2], [1, 4]])


def _ap_other_dtype(x):
    x.ap([[x.shape[1], 2], [1, 4]], dtype=nl.int32)


@pytest.mark.parametrize("body, message", [
    (_reshape_split_partitions, "keeps its partition dim"),
    (_ap_inside_a_row, "sliced inside its rows"),
    (_ap_other_dtype, "reinterprets"),
], ids=["reshape-partitions", "ap-sliced-view", "ap-dtype"])
def test_view_refusals_are_located(body, message):
    @nki.jit
    def kernel(x):
        body(x)
        out = nl.ndarray((1, 1), dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(x[0:1, 0:1]))
        return out

    with pytest.raises(KernelError, match=message) as err:
        nki.simulate(kernel)(np.zeros((8, 16), np.float32))
    assert "test_nki_block_views.py:" in str(err.value)


@nki.jit
def many_psum_blocks(a, b):
    """16 blocks of [64, 512] float32 (32 KiB per partition, twice PSUM): one tile per block."""
    out = nl.ndarray((4, 4, 64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    qk = nl.ndarray((4, 4, nl.par_dim(64), 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(4):
        row = qk[i]                       # the remaining block dim stays
        for j in nl.affine_range(4):
            row[j, :, :] = nisa.nc_matmul(nl.load(a[:, nl.ds(i * 64, 64)]),
                                          nl.load(b[:, nl.ds(j * 512, 512)]))
            nl.store(out[i, j], nl.copy(qk[i, j]))
    return out


def test_blocks_larger_than_psum_together_are_one_tile_each():
    rng = np.random.default_rng(14)
    a = rng.integers(-3, 4, (32, 256)).astype(np.float32)
    b = rng.integers(-3, 4, (32, 2048)).astype(np.float32)
    want = (a.T @ b).reshape(4, 64, 4, 512).transpose(0, 2, 1, 3)
    np.testing.assert_array_equal(both(many_psum_blocks, a, b), want)


def test_a_block_tensor_takes_int_block_indices_only():
    @nki.jit
    def kernel(x):
        qk = nl.zeros((4, 4, nl.par_dim(64), 512), dtype=nl.float32, buffer=nl.psum)
        out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.copy(qk[nl.arange(4)[:, None], 0]))
        return out

    with pytest.raises(KernelError, match=r"block dims \(before nl.par_dim\) are indexed with ints") as err:
        nki.simulate(kernel)(np.zeros((1, 1), np.float32))
    assert "test_nki_block_views.py:" in str(err.value)


def test_psum_overflow_names_the_kernel_line():
    from tilecc.errors import SimError

    @nki.jit
    def kernel(a):
        out = nl.ndarray((a.shape[0], 4096), dtype=nl.float32, buffer=nl.shared_hbm)
        big = nl.zeros((a.shape[0], 4096), dtype=nl.float32, buffer=nl.psum)   # all of PSUM
        more = nl.zeros((a.shape[0], 512), dtype=nl.float32, buffer=nl.psum)
        nl.store(out, nl.add(nl.copy(big), nl.copy(more[:, 0:1])))
        return out

    with pytest.raises(SimError, match=r"test_nki_block_views.py:\d+:\d+ .*PSUM locations live there "
                                       r"need 18432 bytes"):
        nki.simulate(kernel)(np.zeros((8, 1), np.float32))
