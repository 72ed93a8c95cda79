"""nisa.nc_matmul / nisa.nc_transpose through the whole path (trace -> KLR -> BIR ->
simulator, and the KLR interpreter) against numpy, in both NKI forms, and every documented
restriction as a located KernelError."""

from __future__ import annotations

import inspect

import ml_dtypes
import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.klr import ast as k
from tilecc.klr.interp import interpret_kernel
from tilecc.nki import KernelError

BF16 = ml_dtypes.bfloat16


def both(kernel, *args):
    """The simulator's result, checked equal to the KLR interpreter's."""
    sim = nki.simulate(kernel)(*args)
    traced = nki.trace_kernel(kernel, *args)
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    ref = interpret_kernel(traced.kernel, dict(zip([t.name for t in traced.kernel.inputs], arrays)))
    ref_value = ref[traced.returned_names[0]] if traced.returned else next(iter(ref.values()))
    np.testing.assert_allclose(np.asarray(sim, np.float32),
                               np.asarray(ref_value, np.float32).reshape(np.shape(sim)),
                               rtol=1e-5, atol=1e-4)
    return np.asarray(sim)


@nki.jit
def matmul_2x(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    for i in nl.static_range(K // 128):
        lhs_sb = nl.ndarray((128, M), dtype=lhsT.dtype, buffer=nl.sbuf)
        rhs_sb = nl.ndarray((128, N), dtype=rhs.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=lhs_sb, src=lhsT[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=rhs_sb, src=rhs[i * 128:(i + 1) * 128, :])
        nisa.nc_matmul(dst=acc, stationary=lhs_sb, moving=rhs_sb)   # accumulate=None: inferred
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=result, src=res)
    return result


@nki.jit
def matmul_1x(lhsT, rhs):
    K, M = lhsT.shape
    result = nl.ndarray((M, rhs.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((M, rhs.shape[1]), nl.float32, buffer=nl.psum)
    for i in nl.affine_range(K // 128):
        acc += nisa.nc_matmul(nl.load(lhsT[i * 128:(i + 1) * 128, :]),
                              nl.load(rhs[i * 128:(i + 1) * 128, :]))
    nl.store(result, nl.copy(acc))
    return result


@pytest.mark.parametrize("kernel", [matmul_2x, matmul_1x], ids=["2.x", "1.x"])
def test_k_loop_accumulates_in_psum(kernel):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((384, 96)).astype(BF16)
    b = rng.standard_normal((384, 200)).astype(BF16)
    got = both(kernel, a, b)
    np.testing.assert_allclose(got, a.astype(np.float64).T @ b.astype(np.float64), rtol=1e-4, atol=1e-3)
    matmuls = [s for s in nki.trace_kernel(kernel, a, b).kernel.body if isinstance(s, k.NcMatMul)]
    assert len(matmuls) == 3
    # 2.x infers overwrite first, then accumulate; 1.x accumulates onto the nl.zeros tile
    assert [m.accumulate for m in matmuls] == ([False, True, True] if kernel is matmul_2x else [True] * 3)


def test_explicit_accumulate_false_restarts_the_group():
    @nki.jit
    def restart(a):
        out = nl.ndarray((8, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(a)
        acc = nl.ndarray((8, 8), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=x, moving=x)
        nisa.nc_matmul(dst=acc, stationary=x, moving=x, accumulate=False)
        nl.store(out, nl.copy(acc))
        return out

    a = np.arange(64, dtype=np.float32).reshape(8, 8) / 8
    np.testing.assert_allclose(both(restart, a), a.T @ a, rtol=1e-6)


def test_tensor_engine_transpose_both_forms_and_identity():
    @nki.jit
    def flip(a):
        out = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        t = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.psum)
        nisa.nc_transpose(dst=t, data=x, engine=nisa.engine.tensor)
        back = nisa.nc_transpose(nl.copy(t))              # 1.x: [64, 96] -> a new PSUM tile
        again = nisa.nc_transpose(nl.copy(back))
        nl.store(out, nl.copy(again))
        return out

    a = np.random.default_rng(1).standard_normal((64, 96)).astype(BF16)
    a[0, :3] = [np.nan, np.inf, -np.inf]
    got = both(flip, a)
    np.testing.assert_array_equal(got.view(np.uint16), a.T.view(np.uint16))


def test_vector_engine_transpose_of_a_small_tile():
    @nki.jit
    def small(a):
        out = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_transpose(nl.load(a)))   # 32 x 16: the Vector Engine
        return out

    a = np.arange(32 * 16, dtype=np.int32).reshape(32, 16)
    kernel = nki.trace_kernel(small, a).kernel
    assert any(isinstance(s, k.Transpose) for s in kernel.body)
    np.testing.assert_array_equal(both(small, a), a.T)


def test_fp8_double_row():
    @nki.jit
    def double(a, b):
        out = nl.ndarray((4, 6), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((4, 6), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(acc, nl.load(a), nl.load(b), perf_mode=nisa.matmul_perf_mode.double_row)
        nl.store(out, nl.copy(acc))
        return out

    rng = np.random.default_rng(2)
    a = rng.integers(-3, 4, (128, 2, 4)).astype(ml_dtypes.float8_e4m3)
    b = rng.integers(-3, 4, (128, 2, 6)).astype(ml_dtypes.float8_e5m2)
    want = np.einsum("ptm,ptn->mn", a.astype(np.float32), b.astype(np.float32))
    np.testing.assert_array_equal(both(double, a, b), want)


# ---------------------------------------------------------------- restrictions

def marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if "# <-" in line)


def sb(shape, dtype=nl.bfloat16):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)


def ps(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.psum)


def contraction_over_128(a):
    nisa.nc_matmul(ps((8, 8)), sb((128, 8)), sb((64, 8)))  # <-


def stationary_too_wide(a):
    nisa.nc_matmul(ps((128, 8)), sb((128, 129)), sb((128, 8)))  # <-


def moving_too_wide(a):
    nisa.nc_matmul(ps((8, 513)), sb((128, 8)), sb((128, 513)))  # <-


def dst_in_sbuf(a):
    nisa.nc_matmul(sb((8, 8), nl.float32), sb((128, 8)), sb((128, 8)))  # <-


def moving_in_psum(a):
    nisa.nc_matmul(ps((8, 8)), sb((128, 8)), ps((128, 8), nl.bfloat16))  # <-


def wrong_dst_shape(a):
    nisa.nc_matmul(ps((8, 16)), sb((128, 8)), sb((128, 8)))  # <-


def fp32_with_bf16(a):
    nisa.nc_matmul(ps((8, 8)), sb((128, 8), nl.float32), sb((128, 8)))  # <-


def int_inputs(a):
    nisa.nc_matmul(ps((8, 8)), sb((128, 8), nl.int32), sb((128, 8), nl.int32))  # <-


def e4m3_with_e4m3fn(a):
    nisa.nc_matmul(ps((8, 8)), sb((128, 8), nl.float8_e4m3), sb((128, 8), nl.float8_e4m3fn))  # <-


def int_dst(a):
    nisa.nc_matmul(ps((8, 8), nl.int32), sb((128, 8)), sb((128, 8)))  # <-


def half_tiling(a):
    nisa.nc_matmul(ps((8, 8)), sb((128, 8)), sb((128, 8)), tile_position=(0, 0))  # <-


def tile_size_48(a):
    nisa.nc_matmul(ps((8, 8)), sb((32, 8)), sb((32, 8)), tile_position=(0, 0), tile_size=(48, 128))  # <-


def tile_position_off_grid(a):
    nisa.nc_matmul(ps((8, 8)), sb((32, 8)), sb((32, 8)), tile_position=(16, 0), tile_size=(32, 128))  # <-


def rows_beyond_tile(a):
    nisa.nc_matmul(ps((8, 8)), sb((64, 8)), sb((64, 8)), tile_position=(0, 0), tile_size=(32, 128))  # <-


def double_row_bf16(a):
    nisa.nc_matmul(ps((4, 4)), sb((128, 2, 4)), sb((128, 2, 4)),  # <-
                   perf_mode=nisa.matmul_perf_mode.double_row)


def double_row_column_tiling(a):
    f8 = nl.float8_e4m3
    nisa.nc_matmul(ps((4, 4)), sb((32, 2, 4), f8), sb((32, 2, 4), f8), tile_position=(0, 0),  # <-
                   tile_size=(32, 32), perf_mode=nisa.matmul_perf_mode.double_row)


def accumulate_not_bool(a):
    nisa.nc_matmul(ps((8, 8)), sb((128, 8)), sb((128, 8)), accumulate=1)  # <-


def transpose_changes_dtype(a):
    nisa.nc_transpose(ps((8, 128), nl.float32), sb((128, 8)))  # <-


def transpose_wrong_shape(a):
    nisa.nc_transpose(ps((8, 64)), sb((128, 8)))  # <-


def pe_transpose_into_sbuf(a):
    nisa.nc_transpose(sb((8, 128)), sb((128, 8)), engine=nisa.engine.tensor)  # <-


def matmul_mask(a):
    nisa.nc_matmul(sb((128, 8)), sb((128, 8)), mask=nl.arange(8)[None, :] < 4)  # <-


def mx_matmul(a):
    nisa.nc_matmul_mx(ps((8, 8)), sb((128, 8)), sb((128, 8)), sb((128, 1)), sb((128, 1)))  # <-


def mx_quantize(a):
    nisa.quantize_mx(sb((128, 8)), sb((128, 8)), sb((128, 1)))  # <-


def mx_dtype(a):
    nl.ndarray((128, 8), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)  # <-


def across_a_bank(a):
    acc = ps((8, 1024))
    nisa.nc_matmul(acc[:, 256:768], sb((128, 8)), sb((128, 512)))  # <-


CASES = [
    (across_a_bank, r"covers bytes 1024..3071 of each PSUM partition, across a 2 KiB bank"),
    (mx_dtype, r"nl.float8_e4m3fn_x4 is not supported by tilecc: the MX quantized family"),
    (contraction_over_128, r"nc_matmul: moving has 64 partitions but stationary has 128"),
    (stationary_too_wide, r"nc_matmul: stationary free size 129 exceeds 128"),
    (moving_too_wide, r"moving free size 513 exceeds 512 \(one PSUM bank of float32\)"),
    (dst_in_sbuf, r"nc_matmul: dst must be a tile in PSUM"),
    (moving_in_psum, r"nc_matmul: moving must be a tile in SBUF"),
    (wrong_dst_shape, r"nc_matmul: dst \[8, 16\] must be \[8, 8\]"),
    (fp32_with_bf16, r"a tfloat32 / float32 input needs a tfloat32 / float32 partner"),
    (int_inputs, r"stationary dtype int32 is not one of"),
    (e4m3_with_e4m3fn, r"float8_e4m3 and float8_e4m3fn cannot be mixed"),
    (int_dst, r"dst must be float32 or bfloat16, got int32"),
    (half_tiling, r"tile_position and tile_size must both be set"),
    (tile_size_48, r"tile_size row 48 must be 32, 64 or 128"),
    (tile_position_off_grid, r"tile_position row 16 must be a multiple of 32"),
    (rows_beyond_tile, r"contraction \(partition\) size 64 exceeds 32"),
    (double_row_bf16, r"double_row needs fp8 inputs"),
    (double_row_column_tiling, r"double_row cannot be combined with column tiling"),
    (accumulate_not_bool, r"accumulate must be True, False or None"),
    (transpose_changes_dtype, r"nc_transpose: dst dtype float32 must be data's bfloat16"),
    (transpose_wrong_shape, r"nc_transpose: dst \[8, 64\] must be \[8, 128\]"),
    (pe_transpose_into_sbuf, r"the Tensor Engine reads data from SBUF and writes dst to PSUM"),
    (matmul_mask, r"nc_matmul: mask= of grid indices is not supported"),
    (mx_matmul, r"nisa.nc_matmul_mx is not supported by tilecc: the MX quantized family"),
    (mx_quantize, r"nisa.quantize_mx is not supported by tilecc: the MX quantized family"),
]


@pytest.mark.parametrize("kernel, message", CASES, ids=[c[0].__name__ for c in CASES])
def test_restriction_is_a_located_kernel_error(kernel, message):
    with pytest.raises(KernelError, match=message) as info:
        nki.trace_kernel(kernel, nki.ArgSpec((128, 8), np.float32))
    assert (info.value.path, info.value.line) == (__file__, marked_line(kernel))


def test_1x_transpose_with_a_cast():
    @nki.jit
    def cast(a):
        out = nl.ndarray((a.shape[1], a.shape[0]), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_transpose(nl.load(a), dtype=nl.float32))
        return out

    a = np.arange(64 * 48).reshape(64, 48).astype(BF16)
    np.testing.assert_array_equal(both(cast, a), a.T.astype(np.float32))
