"""Instructions on real values through the whole pipeline (trace -> KLR -> BIR -> simulator):
negative numbers, integer wrap-around, NaN / inf, dtype conversion, accumulator commands."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.klr import ast

R = nisa.reduce_cmd


def load(a, dtype=None):
    tile = nl.ndarray(a.shape, dtype=a.dtype if dtype is None else dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=a)
    return tile


def store(tile, name=""):
    out = nl.ndarray(tile.shape, dtype=tile.dtype, buffer=nl.shared_hbm, name=name)
    nisa.dma_copy(dst=out, src=tile)
    return out


def new(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)


RNG = np.random.default_rng(2024)
X = RNG.normal(0.0, 3.0, size=(128, 16)).astype(np.float32)


def test_tensor_scalar_reverse_flags():
    def kernel(a):
        x = load(a)
        y = new(a.shape)
        nisa.tensor_scalar(dst=y, data=x, op0=nl.subtract, operand0=2.0, reverse0=True,
                           op1=nl.divide, operand1=4.0, reverse1=True)
        return store(y)

    got = nki.simulate(kernel)(X)
    np.testing.assert_allclose(got, np.float32(4.0) / (np.float32(2.0) - X), rtol=1e-6)


def test_int32_shift_wraps_on_raw_bits():
    values = np.array([[1, -1, 2**31 - 1, -2**31, 0x40000000, 7]], dtype=np.int32)

    def kernel(a):
        x = load(a)
        y = new(a.shape, nl.int32)
        nisa.tensor_scalar(dst=y, data=x, op0=nl.left_shift, operand0=1)
        return store(y)

    got = nki.simulate(kernel)(values)
    np.testing.assert_array_equal(got, np.array([[2, -2, -2, 0, -2**31, 14]], dtype=np.int32))


def test_right_shift_is_logical():
    values = np.array([[-8, -1, 2**31 - 1, -2**31, 12, 0]], dtype=np.int32)

    def kernel(a):
        x = load(a)
        y = new(a.shape, nl.int32)
        nisa.tensor_scalar(dst=y, data=x, op0=nl.right_shift, operand0=1)
        return store(y)

    got = nki.simulate(kernel)(values)
    np.testing.assert_array_equal(got, (values.view(np.uint32) >> 1).view(np.int32))


def test_tensor_reduce_two_axes_keepdims_negate():
    cube = RNG.normal(size=(64, 3, 5)).astype(np.float32)

    def kernel(a):
        x = load(a)
        r = new((64, 1, 1))
        nisa.tensor_reduce(dst=r, op=nl.add, data=x, axis=(1, 2), negate=True, keepdims=True)
        return store(r)

    got = nki.simulate(kernel)(cube)
    np.testing.assert_allclose(got, -cube.sum(axis=(1, 2), keepdims=True), rtol=1e-5, atol=1e-6)


def test_iota_with_channel_multiplier_into_int32():
    def kernel(a):
        t = new((8, 2, 3), nl.int32)
        nisa.iota(dst=t, pattern=[[10, 2], [1, 3]], offset=-5, channel_multiplier=100)
        return store(t)

    got = nki.simulate(kernel)(np.zeros((1, 1), np.float32))
    p, w, x = np.meshgrid(np.arange(8), np.arange(2), np.arange(3), indexing="ij")
    np.testing.assert_array_equal(got, (-5 + 100 * p + 10 * w + x).astype(np.int32))


def test_copies_convert_dtypes_round_to_nearest_even():
    values = np.array([[1.0, 1.00390625, 1.01171875, -3.3, 65504.0, 1e-3]], dtype=np.float32)

    def kernel(a):
        x = load(a)
        b = new(a.shape, nl.bfloat16)
        nisa.tensor_copy(dst=b, src=x)
        d = new(a.shape, nl.bfloat16)
        nisa.dma_copy(dst=d, src=a)
        return store(b, "by_engine"), store(d, "by_dma")

    by_engine, by_dma = nki.simulate(kernel)(values)
    want = values.astype(ml_dtypes.bfloat16)
    assert by_engine.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(by_engine, want)
    np.testing.assert_array_equal(by_dma, want)


def test_partition_reduce_bitwise_or_on_int32():
    ints = RNG.integers(-2**31, 2**31, size=(128, 32), dtype=np.int64).astype(np.int32)

    def kernel(a):
        x = load(a)
        r = new((1, 32), nl.int32)
        nisa.tensor_partition_reduce(dst=r, op=nl.bitwise_or, data=x)
        return store(r)

    got = nki.simulate(kernel)(ints)
    np.testing.assert_array_equal(got, np.bitwise_or.reduce(ints, axis=0, keepdims=True))


def test_exponential_load_reduce_starts_from_reduce_init():
    def kernel(a):
        x = load(a)
        e, s = new(a.shape), new((128, 1))
        nisa.exponential(dst=e, src=x, max_value=1.0, reduce_res=s, reduce_cmd=R.load_reduce,
                         reduce_init=10.0)
        return store(e, "e"), store(s, "s")

    x = np.clip(X, -10, 10)
    e, s = nki.simulate(kernel)(x)
    np.testing.assert_allclose(e, np.exp(x - 1.0), rtol=1e-5)
    np.testing.assert_allclose(s, 10.0 + np.exp(x - 1.0).sum(axis=1, keepdims=True), rtol=1e-5)


def test_activation_accumulates_across_instructions():
    scale = RNG.uniform(0.5, 2.0, size=(128, 1)).astype(np.float32)
    bias = RNG.normal(size=(128, 1)).astype(np.float32)

    def kernel(a, sc, bi):
        x, s, b = load(a), load(sc), load(bi)
        y, acc = new(a.shape), new((128, 1))
        nisa.activation(dst=y, op=nl.copy, data=x, bias=b, scale=s, reduce_op=nl.add, reduce_res=acc,
                        reduce_cmd=R.reset_reduce)
        nisa.activation(dst=y, op=nl.copy, data=x, scale=2.0, reduce_op=nl.add, reduce_res=acc,
                        reduce_cmd=R.reduce)
        return store(y, "y"), store(acc, "acc")

    y, acc = nki.simulate(kernel)(X, scale, bias)
    first = X * scale + bias
    np.testing.assert_allclose(y, 2.0 * X, rtol=1e-6)
    np.testing.assert_allclose(acc, (first + 2.0 * X).sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-4)


def test_nan_and_inf():
    values = np.array([[np.nan, 1.0, 0.0, -0.0, np.inf, -2.0]], dtype=np.float32)

    def kernel(a):
        x = load(a)
        m, r = new(a.shape), new(a.shape)
        nisa.tensor_scalar(dst=m, data=x, op0=nl.maximum, operand0=0.5)
        nisa.reciprocal(dst=r, data=x)
        return store(m, "m"), store(r, "r")

    m, r = nki.simulate(kernel)(values)
    np.testing.assert_array_equal(m, np.maximum(values, np.float32(0.5)))
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(r, np.float32(1.0) / values)


def test_scalar_tensor_tensor_reverse_and_tile_operand():
    col = RNG.normal(size=(128, 1)).astype(np.float32)
    other = RNG.normal(size=(128, 16)).astype(np.float32)

    def kernel(a, c, b):
        x, cc, bb = load(a), load(c), load(b)
        y = new(a.shape)
        nisa.scalar_tensor_tensor(dst=y, data=x, op0=nl.subtract, operand0=cc, op1=nl.divide,
                                  operand1=bb, reverse0=True, reverse1=True)
        return store(y)

    got = nki.simulate(kernel)(X, col, other)
    np.testing.assert_allclose(got, other / (col - X), rtol=1e-5)


def test_three_dim_hbm_slab_and_bf16_input():
    slab = RNG.normal(size=(2, 256, 8)).astype(ml_dtypes.bfloat16)

    def kernel(a):
        t = new((128, 8))
        nisa.dma_copy(dst=t, src=a[1, 64:192, :])
        return store(t)

    got = nki.simulate(kernel)(slab)
    np.testing.assert_array_equal(got, slab[1, 64:192, :].astype(np.float32))


def test_scan_with_per_partition_initial_tile():
    init = RNG.normal(size=(128, 1)).astype(np.float32)
    decay = RNG.uniform(0.5, 1.0, size=(128, 16)).astype(np.float32)

    def kernel(d, x, i):
        dd, xx, ii = load(d), load(x), load(i)
        r = new(d.shape)
        nisa.tensor_tensor_scan(dst=r, data0=dd, data1=xx, initial=ii, op0=nl.multiply, op1=nl.add)
        return store(r)

    got = nki.simulate(kernel)(decay, X, init)
    want = np.empty_like(X)
    state = init[:, 0]
    for i in range(16):
        state = decay[:, i] * state + X[:, i]
        want[:, i] = state
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_in_out_argument_hbm_scratch_and_psum_tiles():
    def kernel(a, out):
        top = load(a[0:64, :])
        scratch = nl.ndarray((64, 16), dtype=nl.float32, buffer=nl.hbm)
        nisa.dma_copy(dst=scratch, src=top)
        again = load(scratch)
        acc = nl.ndarray((64, 16), dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_tensor(dst=acc, data1=again, data2=again, op=nl.add)
        doubled = new((64, 16))
        nisa.tensor_copy(dst=doubled, src=acc)
        nisa.dma_copy(dst=out[0:64, :], src=doubled)
        return out

    previous = np.full((128, 16), -7.0, np.float32)
    for backend in ("bir", "klr"):
        got = nki.simulate(kernel, backend=backend)(X, previous)
        np.testing.assert_array_equal(got[:64], 2.0 * X[:64])
        np.testing.assert_array_equal(got[64:], previous[64:])   # rows the kernel does not write


def test_tile_assignment_copies_and_fills_and_out_parameters():
    """NKI 1.x style: results written into an argument, no return; `t[...] = src` copies."""
    def kernel(a, out):
        x = load(a)
        y = new(a.shape)
        y[...] = 0.5                       # memset
        y[0:64, 0:8] = x[0:64, 8:16]       # tensor_copy
        out[:, :] = y                      # dma_copy into the out-parameter

    initial = np.zeros_like(X)
    got = nki.simulate(kernel)(X, initial)
    want = np.full_like(X, 0.5)
    want[0:64, 0:8] = X[0:64, 8:16]
    np.testing.assert_array_equal(got, want)


def test_mod_is_pythons_modulus_and_fmod_keeps_the_dividends_sign():
    x = np.array([[-7.0, 7.0, -6.0, 6.0, -0.0, 0.5, -0.5, 19.25]], np.float32).repeat(4, axis=0)
    y = np.array([[3.0, -3.0, -3.0, 3.0, 3.0, -2.0, 2.0, -4.5]], np.float32).repeat(4, axis=0)
    x[1:] *= RNG.uniform(1, 5, size=(3, 8)).astype(np.float32)

    def kernel(a, b):
        ta, tb = nl.load(a), nl.load(b)
        return (store(nl.mod(ta, 3.0)), store(nl.mod(ta, -2.5)), store(nl.mod(ta, tb)),
                store(nl.fmod(ta, 3.0)), store(nl.mod(ta, 0.0)))

    for backend in ("bir", "klr"):
        by_three, by_neg, by_tile, fmod, by_zero = nki.simulate(kernel, backend=backend)(x, y)
        np.testing.assert_array_equal(by_three, np.mod(x, np.float32(3)))
        np.testing.assert_array_equal(by_neg, np.mod(x, np.float32(-2.5)))
        np.testing.assert_array_equal(by_tile, np.mod(x, y))
        np.testing.assert_array_equal(fmod, np.fmod(x, np.float32(3)))
        assert np.isnan(by_zero).all()
    assert np.signbit(np.mod(x, y)[0, 4]) == np.signbit(by_tile[0, 4])   # -0 mod 3 is +0


def test_mod_of_negative_int32_tiles():
    k = np.array([[-7, 7, -6, 6, -1, 0, 13, -13]], np.int32).repeat(2, axis=0)

    def kernel(a):
        return store(nl.mod(nl.load(a), 4))

    for backend in ("bir", "klr"):
        np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(k), np.mod(k, 4))


def test_tensor_tensor_of_two_sbuf_dtypes_computes_in_float32():
    # BIR refuses two SBUF inputs of different dtypes (spec 003); the bf16 input is copied
    # to float32 first, the conversion the engine makes when it reads it
    a = RNG.normal(size=(32, 8)).astype(ml_dtypes.bfloat16)
    b = RNG.normal(size=(32, 8)).astype(np.float32)
    k = RNG.integers(-2**20, 2**20, size=(32, 8)).astype(np.int32)

    def kernel(x, y, z):
        tx, ty, tz = nl.load(x), nl.load(y), nl.load(z)
        return (store(nisa.tensor_tensor(tx, ty, op=np.subtract)), store(nl.multiply(tz, tx)),
                store(nisa.tensor_tensor(tz, tx, op=np.add, dtype=nl.int32)))

    traced = nki.trace_kernel(kernel, a, b, k).kernel
    copies = [s for s in traced.body if type(s).__name__ == "NcCopy"]
    assert len(copies) == 5   # each input that is not float32, once per instruction
    for backend in ("bir", "klr"):
        diff, prod, total = nki.simulate(kernel, backend=backend)(a, b, k)
        assert diff.dtype == np.float32 and prod.dtype == np.float32 and total.dtype == np.int32
        np.testing.assert_array_equal(diff, a.astype(np.float32) - b)
        np.testing.assert_array_equal(prod, k.astype(np.float32) * a.astype(np.float32))
        np.testing.assert_array_equal(total, np.rint(k.astype(np.float32) + a.astype(np.float32)).astype(np.int32))


def test_a_loop_over_a_large_tensor_fits_because_its_tiles_live_one_iteration():
    # 256 iterations x three [128, 64] float32 tiles = 192 KiB: more than SBUF side by side;
    # the tiles of one iteration are dead in the next, as on the machine. Tracing stays linear
    # in the number of tiles named alike.
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(x.shape[0] // 128):
            for j in nl.affine_range(x.shape[1] // 64):
                t = nl.load(x[i * 128:(i + 1) * 128, j * 64:(j + 1) * 64])
                u = nisa.tensor_scalar(t, np.multiply, 2.0, op1=np.add, operand1=-1.0)
                v = nisa.activation(op=nl.abs, data=u)
                nl.store(out[i * 128:(i + 1) * 128, j * 64:(j + 1) * 64], v)
        return out

    x = RNG.normal(size=(4096, 512)).astype(np.float32)
    names = {s.dst.name for s in nki.trace_kernel(kernel, x).kernel.body if hasattr(s.dst, "name")}
    assert {"t", "t_1", "t_255", "v_255"} <= names
    for backend in ("bir", "klr"):
        np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(x),
                                      np.abs(x * np.float32(2) - np.float32(1)))


def test_compile_time_masks_true_masks_nothing_and_false_skips_the_instruction():
    # `mask=j + 1 < n` with Python ints is a constant: NKI runs the instruction or skips it
    x = RNG.normal(size=(32, 48)).astype(np.float32)

    def kernel(a):
        out = nl.ndarray((32, 1), dtype=a.dtype, buffer=nl.shared_hbm)
        untouched = nl.ndarray((32, 16), dtype=a.dtype, buffer=nl.shared_hbm)
        carry = nl.zeros((32, 1), dtype=nl.float32)
        n = 3
        for j in nl.sequential_range(n):
            chunk = nl.load(a[:, j * 16:(j + 1) * 16], mask=True)
            carry[...] = nl.copy(chunk[:, 15], mask=j + 1 < n)     # the last chunk is skipped
            skipped = nisa.tensor_scalar(chunk, np.add, 1.0, mask=j > 5)
            nl.store(untouched, skipped)                             # stores nothing
        nl.store(untouched, nl.load(a[:, 0:16]), mask=False)
        nl.store(out, carry)
        return out, untouched

    body = nki.trace_kernel(kernel, x).kernel.body
    assert sum(isinstance(s, ast.NcCopy) for s in body) == 2
    assert not any(isinstance(s, ast.TensorScalar) for s in body)
    for backend in ("bir", "klr"):
        last, untouched = nki.simulate(kernel, backend=backend)(x)
        np.testing.assert_array_equal(last, x[:, 31:32])
        np.testing.assert_array_equal(untouched, np.zeros((32, 16), np.float32))


def test_rows_of_a_reshaped_hbm_tensor_cross_its_first_dim():
    # [2, 70, 64] seen as [140, 64]: the rows of a 128-row tile straddle the first dim, one
    # DMA per row
    x = RNG.normal(size=(2, 70, 64)).astype(np.float32)

    def kernel(a):
        flat = a.reshape((140, 64))
        out = nl.ndarray((140, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:64]
        for i in nl.affine_range(2):
            keep = i * 128 + i_p < 140
            t = nl.load(flat[i * 128 + i_p, i_f], mask=keep)
            nl.store(out[i * 128 + i_p, i_f], nl.multiply(t, -2.0, mask=keep), mask=keep)
        return out

    for backend in ("bir", "klr"):
        np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(x),
                                      x.reshape(140, 64) * np.float32(-2))
