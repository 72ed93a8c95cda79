"""NKI 1.x call forms published kernels use: compile-time masks on Tensor Engine calls (True
computes, False skips the call and its `+=`), a mask joined with a compile-time condition,
affine_select on a PSUM tile, nl.zeros(lazy_initialization=), and mask= on the per-partition
searches (max8 / nc_match_replace8 read the box, write the box's partitions). Simulator and
KLR interpreter against numpy; a mask of grid indices on a matmul is a located KernelError."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki import KernelError
from test_nki_tensor_engine import both


@nki.jit
def causal_block_sums(a, b):
    """out = sum over k-blocks kb <= row-block of a[kb].T @ b[kb] (a block-causal product)."""
    k, m = a.shape
    out = nl.ndarray((m, b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    blocks = k // 32
    acc = nl.zeros((m, b.shape[1]), dtype=nl.float32, buffer=nl.psum, lazy_initialization=True)
    for kb in nl.affine_range(blocks):
        acc[...] += nisa.nc_matmul(nl.load(a[nl.ds(kb * 32, 32), :]),
                                   nl.load(b[nl.ds(kb * 32, 32), :]), mask=kb < blocks - 1)
    ip, jf = nl.mgrid[0:m, 0:b.shape[1]]
    nl.store(out[ip, jf], nl.copy(acc), mask=(jf < b.shape[1]) & (blocks > 1))
    return out


def test_constant_masks_on_the_tensor_engine():
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (128, 16)).astype(np.float32)
    b = rng.integers(-3, 4, (128, 24)).astype(np.float32)
    want = a[:96].T @ b[:96]   # the last block's matmul is masked off
    np.testing.assert_array_equal(both(causal_block_sums, a, b), want)


@nki.jit
def select_from_psum(a, b):
    out = nl.ndarray((a.shape[1], b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    product = nisa.nc_matmul(nl.load(a), nl.load(b))
    ix, iy = nl.mgrid[0:a.shape[1], 0:b.shape[1]]
    kept = nisa.affine_select(pred=(ix - iy >= 0), on_true_tile=product, on_false_value=-9984.0)
    nl.store(out, kept)
    return out


def test_affine_select_of_a_psum_tile():
    rng = np.random.default_rng(6)
    a = rng.normal(size=(64, 32)).astype(np.float32)
    b = rng.normal(size=(64, 48)).astype(np.float32)
    product = (a.T.astype(np.float64) @ b).astype(np.float32)
    want = np.where(np.arange(32)[:, None] >= np.arange(48)[None, :], product, np.float32(-9984.0))
    np.testing.assert_allclose(both(select_from_psum, a, b), want, rtol=1e-5, atol=1e-4)


@nki.jit
def masked_top8(a):
    n, m = a.shape
    vals = nl.ndarray((n, 8), dtype=a.dtype, buffer=nl.shared_hbm)
    replaced = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    ix, iy = nl.mgrid[0:n, 0:m]
    tile = nl.load(a)
    top = nisa.max8(src=tile[ix, iy], mask=(ix < n // 2) & (iy < m // 2))
    out = nisa.nc_match_replace8(data=tile[ix, iy], vals=top, imm=0.0,
                                 mask=(ix < n // 2) & (iy < m // 2))
    nl.store(vals[0:n // 2, :], top[0:n // 2, :])
    nl.store(replaced[0:n // 2, 0:m // 2], out[0:n // 2, 0:m // 2])
    return vals, replaced


def test_masked_searches_read_the_box_and_write_its_partitions():
    a = np.random.default_rng(7).permutation(64 * 32).reshape(64, 32).astype(np.float32)
    vals, replaced = nki.simulate(masked_top8)(a)
    box = a[:32, :16]
    top = -np.sort(-box, axis=1)[:, :8]
    np.testing.assert_array_equal(vals[:32], top)
    want = np.where(box >= top[:, 7:8], 0.0, box)
    np.testing.assert_array_equal(replaced[:32, :16], want)


def test_a_grid_mask_on_a_matmul_is_a_located_error():
    @nki.jit
    def kernel(a):
        out = nl.ndarray((a.shape[1], a.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
        ix, iy = nl.mgrid[0:a.shape[0], 0:a.shape[1]]
        tile = nl.load(a)
        nl.store(out, nl.copy(nisa.nc_matmul(tile, tile, mask=(ix < 32))))
        return out

    with pytest.raises(KernelError, match="mask= of grid indices is not supported") as err:
        nki.simulate(kernel)(np.zeros((64, 16), np.float32))
    assert "test_nki_legacy_call_forms.py:" in str(err.value)


@nki.jit
def window_argmax_mask(x):
    """1 where an element equals its 2 x 2 window's max (nki-samples' select-and-scatter)."""
    p, w = x.shape[0], x.shape[1]
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    tile = nl.load(x)
    best = nl.max(tile, axis=[2, 3], keepdims=True)            # [p, w, 1, 1]
    hits = nl.equal(best, tile, dtype=nl.float32)                # broadcast to [p, w, 2, 2]
    nl.store(out, nl.add(hits, nl.multiply(tile, 0.0)))
    return out


def test_binary_ops_broadcast_size_one_free_dims():
    x = np.random.default_rng(8).permutation(16 * 6 * 4).reshape(16, 6, 2, 2).astype(np.float32)
    want = (x == x.max(axis=(2, 3), keepdims=True)).astype(np.float32)
    np.testing.assert_array_equal(both(window_argmax_mask, x), want)


@nki.jit
def transpose_then_matmul(a, b):
    """(a.T).T @ b = a @ b with the transpose's PSUM result fed straight to nc_matmul (1.x)."""
    out = nl.ndarray((a.shape[0], b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    a_t = nisa.nc_transpose(nl.load(a))                       # [k, m] in PSUM
    nl.store(out, nl.copy(nisa.nc_matmul(a_t, nl.load(b))))
    return out


def test_a_psum_operand_of_a_1x_matmul_is_staged_through_sbuf():
    rng = np.random.default_rng(9)
    a = rng.integers(-3, 4, (48, 64)).astype(np.float32)
    b = rng.integers(-3, 4, (64, 40)).astype(np.float32)
    np.testing.assert_array_equal(both(transpose_then_matmul, a, b), a @ b)


@nki.jit
def ragged_tiles(x):
    """Row tiles of 32; a tile past the end is skipped by a compile-time False mask, so its
    out-of-range access is never made."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ip, jf = nl.mgrid[0:32, 0:x.shape[1]]
    for t in nl.affine_range(4):
        tile = nl.load(x[t * 32 + ip, jf], mask=(t * 32 < x.shape[0]))
        nl.store(out[t * 32 + ip, jf], nl.multiply(tile, 3.0), mask=(t * 32 < x.shape[0]))
    return out


def test_a_load_masked_off_at_compile_time_reads_nothing():
    x = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)
    np.testing.assert_array_equal(both(ragged_tiles, x), 3 * x)


@nki.jit
def rmw_rows(table, rows, values):
    out = nl.ndarray(table.shape, dtype=table.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(table))
    idx = nl.load(rows)
    nl.atomic_rmw(out[idx, nl.arange(table.shape[1])[None, :]], value=nl.load(values), op=np.add)
    nl.atomic_rmw(out[0:4, :], value=nl.load(values[0:4, :]), op=nl.add)
    return out


def test_atomic_rmw_adds_into_rows_and_refuses_other_ops():
    rng = np.random.default_rng(10)
    table = rng.integers(-5, 5, (16, 8)).astype(np.float32)
    rows = np.array([[3], [3], [0], [15], [7], [3]], np.int32)
    values = rng.integers(-5, 5, (6, 8)).astype(np.float32)
    want = table.copy()
    np.add.at(want, rows[:, 0], values)
    want[0:4] += values[0:4]
    np.testing.assert_array_equal(nki.simulate(rmw_rows)(table, rows, values), want)

    @nki.jit
    def multiply(t):
        nl.atomic_rmw(t[0:1, :], value=nl.load(t[0:1, :]), op=np.multiply)
        return t

    with pytest.raises(KernelError, match="op must be an add"):
        nki.simulate(multiply)(table)


@nki.jit
def loop_sum_and_max(x):
    """Over the 4 column blocks of x: their sum and their element-wise max, by nl.loop_reduce."""
    p, n = x.shape
    sums = nl.ndarray((p, n // 4), dtype=nl.float32, buffer=nl.shared_hbm)
    maxes = nl.ndarray((p, n // 4), dtype=nl.float32, buffer=nl.shared_hbm)
    total = nl.zeros((p, n // 4), dtype=nl.float32)
    best = nl.full((p, n // 4), -3.0e38, dtype=nl.float32)
    for k in nl.affine_range(4):
        block = nl.load(x[:, nl.ds(k * (n // 4), n // 4)])
        total[...] = nl.loop_reduce(block, op=np.add, loop_indices=(k,), dtype=nl.float32)
        best[...] = nl.loop_reduce(block, op=np.maximum, loop_indices=k, mask=k < 3)
    nl.store(sums, total)
    nl.store(maxes, best)
    return sums, maxes


def test_loop_reduce_folds_into_its_destination():
    x = np.random.default_rng(11).normal(size=(32, 64)).astype(np.float32)
    blocks = x.reshape(32, 4, 16)
    sums, maxes = nki.simulate(loop_sum_and_max)(x)
    np.testing.assert_allclose(sums, blocks.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(maxes, blocks[:, :3].max(1))   # the last fold is masked off
    with pytest.raises(KernelError, match="op must be an ALU operator"):
        @nki.jit
        def bad(x):
            t = nl.zeros((8, 8), dtype=nl.float32)
            t[...] = nl.loop_reduce(nl.load(x), op=nl.exp, loop_indices=(0,))
            return x
        nki.simulate(bad)(np.zeros((8, 8), np.float32))


@nki.jit
def accumulate_into_a_view(a, b):
    """acc[0] += nc_matmul(...) over K blocks into a PSUM view nothing zeroed first."""
    k, m = a.shape
    out = nl.ndarray((m, b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((1, nl.par_dim(m), b.shape[1]), dtype=nl.float32, buffer=nl.psum)
    for kb in nl.affine_range(k // 128):
        acc[0] += nisa.nc_matmul(nl.load(a[nl.ds(kb * 128, 128), :]),
                                 nl.load(b[nl.ds(kb * 128, 128), :]))
    nl.store(out, nl.copy(acc[0]))
    return out


def test_1x_accumulation_into_a_psum_view_adds_every_block():
    rng = np.random.default_rng(12)
    a = rng.integers(-3, 4, (512, 64)).astype(np.float32)
    b = rng.integers(-3, 4, (512, 96)).astype(np.float32)
    np.testing.assert_array_equal(both(accumulate_into_a_view, a, b), a.T @ b)


@nki.jit
def exp_row_sums(x):
    """1.x activation with a fused row sum: reset_reduce, then reduce over a second call."""
    sums = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
    both_sums = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
    tile = nl.load(x)
    first = nl.ndarray((x.shape[0], 1), dtype=nl.float32)
    second = nl.ndarray((x.shape[0], 1), dtype=nl.float32)
    nisa.activation(op=nl.exp, data=tile, reduce_op=np.add, reduce_res=first,
                    reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.activation(op=nl.exp, data=tile, reduce_op=np.add, reduce_res=second,
                    reduce_cmd=nisa.reduce_cmd.reduce)
    nl.store(sums, first)
    nl.store(both_sums, second)
    return sums, both_sums


def test_1x_activation_reduces_rows_into_reduce_res():
    x = np.random.default_rng(13).normal(size=(64, 48)).astype(np.float32)
    first, second = nki.simulate(exp_row_sums)(x)
    np.testing.assert_allclose(first[:, 0], np.exp(x).sum(1), rtol=1e-5)
    np.testing.assert_allclose(second[:, 0], 2 * np.exp(x).sum(1), rtol=1e-5)


def test_tensor_copy_dtype_casts_before_writing_dst():
    @nki.jit
    def kernel(x, cast):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        landed = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=landed, src=nl.load(x), dtype=nl.bfloat16 if cast else x.dtype)
        nl.store(out, landed)
        return out

    x = (np.arange(32 * 8, dtype=np.float32).reshape(32, 8) + 1) / 7
    np.testing.assert_array_equal(both(kernel, x, False), x)
    rounded = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(both(kernel, x, True), rounded)
    with pytest.raises(KernelError, match="is not an NKI dtype"):
        @nki.jit
        def bad(x):
            t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=t, src=nl.load(x), dtype="complex64")
            return x
        nki.simulate(bad)(x)


def test_assigning_a_matmul_product_to_psum_writes_it_in_place():
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray((a.shape[1], b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
        res = nl.ndarray((2, nl.par_dim(a.shape[1]), b.shape[1]), dtype=nl.float32, buffer=nl.psum)
        res[1, :, :] = nisa.nc_matmul(nl.load(a), nl.load(b))
        nl.store(out, nl.copy(res[1]))
        return out

    from tilecc.klr import ast
    rng = np.random.default_rng(15)
    a = rng.integers(-3, 4, (32, 16)).astype(np.float32)
    b = rng.integers(-3, 4, (32, 24)).astype(np.float32)
    np.testing.assert_array_equal(both(kernel, a, b), a.T @ b)
    body = nki.trace_kernel(kernel, a, b).kernel.body
    matmuls = [s for s in body if isinstance(s, ast.NcMatMul)]
    assert len(matmuls) == 1 and "res" in repr(matmuls[0].dst)
    assert not any(isinstance(s, ast.NcCopy) and "psum" in repr(s.dst) for s in body)
