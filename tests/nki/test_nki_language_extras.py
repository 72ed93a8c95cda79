"""nl names published kernels use beyond the core API: var, negative, logical_not,
zeros_like / ones_like, the grid annotations nc / spmd_dim, callable dtypes; and a kernel's
own Python failures (assert, unknown names) as KernelErrors at the kernel line."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.language as nl
from tilecc.nki import KernelError


def run_tile_op(op, a):
    @nki.jit
    def kernel(x):
        result = op(nl.load(x))
        out = nl.ndarray(result.shape, dtype=result.dtype, buffer=nl.shared_hbm)
        nl.store(out, result)
        return out
    return kernel(a), nki.simulate(kernel, backend="klr")(a)


A = np.array([[1.0, -2.0, 0.0, 7.5], [0.0, 0.0, 3.0, -1e4]], np.float32)


def test_var_is_population_variance_per_row():
    for got in run_tile_op(lambda t: nl.var(t, axis=1), A):
        np.testing.assert_allclose(got, A.astype(np.float64).var(axis=1, keepdims=True), rtol=1e-5)


def test_negative_and_logical_not():
    neg, _ = run_tile_op(nl.negative, A)
    np.testing.assert_array_equal(neg, -A)
    for got in run_tile_op(nl.logical_not, A):
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, (A == 0).astype(np.uint8))


def test_zeros_like_and_ones_like_keep_shape_and_dtype():
    zeros, _ = run_tile_op(lambda t: nl.zeros_like(t, dtype=nl.int32), A)
    ones, _ = run_tile_op(nl.ones_like, A)
    assert zeros.dtype == np.int32 and not zeros.any()
    assert ones.dtype == np.float32 and (ones == 1).all()


def test_callable_dtypes_make_scalars():
    assert nl.float32(2) == 2.0 and isinstance(nl.float32(2), float)
    assert nl.int32(7.0) == 7 and isinstance(nl.int32(7.0), int)
    maxed, _ = run_tile_op(lambda t: nl.maximum(t, nl.float32(0.0)), A)
    np.testing.assert_array_equal(maxed, np.maximum(A, 0))


def test_grid_core_annotations_count_programs():
    @nki.jit
    def copy_block(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        i, j = nl.program_id(0), nl.program_id(1)
        nl.store(out[i, j], nl.load(a[i, j]))
        return out

    a = np.random.default_rng(2).random((4, 2, 1, 1)).astype(np.float32)
    for grid in ((nl.spmd_dim(nl.nc(2), 2), 2), (nl.nc(2) * 2, 2), (2 * nl.nc(2), 2)):
        np.testing.assert_array_equal(copy_block[grid](a), a)


def test_failing_assert_in_a_kernel_points_at_its_line():
    @nki.jit
    def kernel(a):
        assert a.shape[0] % 128 == 0, "rows must be a multiple of 128"  # <-
        return a

    with pytest.raises(KernelError, match="AssertionError: rows must be a multiple of 128") as info:
        kernel(np.zeros((3, 4), np.float32))
    assert "# <-" in info.value.source_line


def test_unknown_nl_name_points_at_its_line():
    @nki.jit
    def kernel(a):
        t = nl.no_such_function(a)  # <-
        return a

    with pytest.raises(KernelError, match="AttributeError: .*no_such_function") as info:
        kernel(np.zeros((3, 4), np.float32))
    assert "# <-" in info.value.source_line


def test_one_partition_row_broadcasts_against_a_tile():
    @nki.jit
    def kernel(a, row):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(row) * nl.load(a) - nl.load(row))
        return out

    rng = np.random.default_rng(8)
    a = rng.normal(size=(64, 5)).astype(np.float32)
    row = rng.normal(size=(1, 5)).astype(np.float32)
    for backend in ("bir", "klr"):
        np.testing.assert_allclose(nki.simulate(kernel, backend=backend)(a, row), row * a - row, rtol=1e-6)


def test_device_run_decorators_simulate_like_jit():
    """@nki.baremetal / @nki.benchmark / @nki.profile (with their options) run a kernel on
    a device in NKI; here they simulate it, launch grids included."""
    def double(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.multiply(nl.load(x), 2.0))
        return out

    for decorated in (nki.baremetal(double), nki.baremetal(save_neff_name="k.neff")(double),
                      nki.benchmark(warmup=2, iters=10)(double), nki.profile(working_directory="/tmp")(double)):
        np.testing.assert_array_equal(decorated(A), A * 2)
        np.testing.assert_array_equal(decorated[1](A), A * 2)


def test_numpy_scalars_are_numbers_everywhere_the_api_takes_one():
    """Sizes, offsets, indices, mask bounds and constants a kernel computes with numpy
    (np.int64(4), np.float32(0.5), an entry of an np.int32 table) act as Python numbers."""
    import tilecc.nki.isa as nisa
    x = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
    rows = np.array([3, 5, 7], np.int32)

    def kernel(a):
        n = np.int64(4)
        out = nl.ndarray((n, np.int32(8)), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(n)[:, None] + np.int32(2)
        t = nl.load(a[i_p, nl.arange(8)[None, :]], mask=i_p < np.int64(100))
        row = nl.load(a[rows[1]:rows[1] + 1, 0:np.int32(8)])
        z = nl.ndarray((n, 8), dtype=a.dtype, buffer=nl.sbuf)
        z[...] = np.float32(1.5)
        u = nisa.tensor_scalar(t, np.multiply, np.float32(2.0), op1=np.add, operand1=np.int32(3))
        w = nisa.activation(op=nl.exp, data=u, scale=np.float32(0.0), bias=np.float64(0.0))
        v = nl.add(nl.add(nl.multiply(u, np.float32(0.5)), z), w)
        nl.store(out, nl.add(v, row.broadcast_to((4, 8))))
        return out

    want = (x[2:6] * 2 + 3) * np.float32(0.5) + np.float32(1.5) + 1 + x[5]
    for backend in ("bir", "klr"):
        np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(x), want)
