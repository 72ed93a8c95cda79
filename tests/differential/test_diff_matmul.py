"""NcMatMul / Transpose / DmaTranspose: codegen + BIR simulator == KLR interpreter, per
variant x dtype x corner values, and both against numpy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from diff_kernels import BF16, F32, KernelBuilder, assert_agree, values
from tilecc.errors import InterpError, SimError
from tilecc.klr import ast as k

INPUT_DTYPES = {"bf16": BF16, "f32": F32, "f16": k.Dtype.float16, "tf32": k.Dtype.float32r,
                "e4m3": k.Dtype.float8e4, "e5m2": k.Dtype.float8e5, "e4m3fn": k.Dtype.float8_e4m3fn}


def psum(name: str, shape: tuple[int, ...], dtype: k.Dtype = F32) -> k.TensorName:
    return k.make_tensor(name, dtype, shape, k.Memory.psum)


def small_ints(dtype: k.Dtype, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Integers in [-3, 3]: exact in every input dtype, so every sum is exact in float32."""
    from tilecc.klr.interp_alu import np_dtype
    return rng.integers(-3, 4, size=shape).astype(np.float32).astype(np_dtype(dtype))


def matmul_kernel(st_values, mv_values, dtype, accumulate_steps=1, **flags):
    kb = KernelBuilder()
    st = kb.load("st", st_values, dtype)
    mv = kb.load("mv", mv_values, dtype)
    m, n = st_values.shape[-1], mv_values.shape[-1]
    acc = psum("acc", (m, n))
    for step in range(accumulate_steps):
        kb.add(k.NcMatMul(acc, st, mv, accumulate=step > 0, **flags))
    out = kb.tile("res", F32, (m, n))
    kb.add(k.NcCopy(out, acc, engine=k.Engine.dve))
    kb.store("out", out)
    return kb


@pytest.mark.parametrize("dtype", INPUT_DTYPES, ids=str)
def test_matmul_every_input_dtype_exact(dtype):
    rng = np.random.default_rng(len(dtype))
    dt = INPUT_DTYPES[dtype]
    st, mv = small_ints(dt, (128, 64), rng), small_ints(dt, (128, 512), rng)
    sim, ref = matmul_kernel(st, mv, dt).run()
    assert_agree(sim, ref, exact=True)
    want = st.astype(np.float32).T @ mv.astype(np.float32)
    np.testing.assert_array_equal(sim["out"], want)


@pytest.mark.parametrize("shape", [(1, 1, 1), (128, 128, 512), (32, 7, 3), (100, 128, 1)], ids=str)
def test_matmul_shapes_random_values(shape):
    kdim, m, n = shape
    rng = np.random.default_rng(kdim + m + n)
    st = values(BF16, (kdim, m), rng, specials=False)
    mv = values(BF16, (kdim, n), rng, specials=False)
    sim, ref = matmul_kernel(st, mv, BF16).run()
    assert_agree(sim, ref, rtol=2e-5, atol=1e-4)
    want = st.astype(np.float64).T @ mv.astype(np.float64)
    np.testing.assert_allclose(sim["out"], want, rtol=1e-4, atol=1e-3)


def test_accumulation_over_three_instructions_and_specials():
    rng = np.random.default_rng(7)
    st = values(F32, (16, 8), rng)       # NaN, inf, -0.0 sprinkled in
    st[st == np.float32(3e38)] = 2.5     # (a sum near the float32 limit overflows or not by its order)
    mv = small_ints(F32, (16, 4), rng)
    sim, ref = matmul_kernel(st, mv, F32, accumulate_steps=3).run()
    assert_agree(sim, ref, rtol=1e-5, atol=1e-4)
    assert np.isnan(sim["out"]).any()


def test_double_row_contracts_partitions_and_the_pair():
    rng = np.random.default_rng(3)
    dt = k.Dtype.float8e4
    st, mv = small_ints(dt, (128, 2, 4), rng), small_ints(dt, (128, 2, 6), rng)
    sim, ref = matmul_kernel(st, mv, dt, perf_mode=k.MatmulPerfMode.DoubleRow).run()
    assert_agree(sim, ref, exact=True)
    want = np.einsum("ptm,ptn->mn", st.astype(np.float64), mv.astype(np.float64))
    np.testing.assert_array_equal(sim["out"], want.astype(np.float32))


def transpose_kernel(data, moving, dtype):
    kb = KernelBuilder()
    st = kb.load("st", data, dtype)
    mv = kb.load("mv", moving, dtype)
    acc = psum("acc", (data.shape[1], moving.shape[1]), dtype)
    kb.add(k.NcMatMul(acc, st, mv, is_transpose=True, is_moving_zero=True))
    out = kb.tile("res", dtype, (data.shape[1], moving.shape[1]))
    kb.add(k.NcCopy(out, acc, engine=k.Engine.dve))
    kb.store("out", out)
    return kb


def test_pe_transpose_is_bit_exact_with_nan_and_inf():
    rng = np.random.default_rng(5)
    data = values(BF16, (64, 96), rng)    # specials included
    eye = np.eye(64, dtype=np.float32).astype(ml_dtypes.bfloat16)
    sim, ref = transpose_kernel(data, eye, BF16).run()
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim["out"].view(np.uint16), data.T.view(np.uint16))


def test_pe_transpose_through_a_permutation():
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    perm = np.eye(4, dtype=np.float32)[:, [2, 0, 3, 1]]
    sim, ref = transpose_kernel(data, perm, F32).run()
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim["out"], (perm.T @ data).T)


def test_transpose_with_a_moving_that_is_not_a_selection_is_refused_by_both():
    data = np.ones((4, 3), np.float32)
    assert transpose_kernel(data, np.full((4, 4), 0.5, np.float32), F32).run_or_reject() is None


def test_a_false_zero_one_hint_is_refused_by_both():
    rng = np.random.default_rng(1)
    st, mv = small_ints(F32, (8, 4), rng) * 2, small_ints(F32, (8, 4), rng)
    kb = matmul_kernel(st, mv, F32, is_stationary_one_zero=True)
    assert kb.run_or_reject() is None


def test_accumulating_into_an_unwritten_psum_tile_reaches_the_output_undefined_on_both():
    rng = np.random.default_rng(2)
    kb = KernelBuilder()
    st = kb.load("st", small_ints(F32, (8, 4), rng), F32)
    acc = psum("acc", (4, 4))
    kb.add(k.NcMatMul(acc, st, st, accumulate=True))
    out = kb.tile("res", F32, (4, 4))
    kb.add(k.NcCopy(out, acc, engine=k.Engine.dve))
    kb.store("out", out)
    # memcheck's rule: the accumulation computes on undefined data, the store reports it
    with pytest.raises(SimError, match=r"undefined data reaches HBM tensor 'out'.*'acc' element \[0, 0\]"):
        kb.run()
    with pytest.raises(InterpError, match=r"undefined data reaches HBM tensor 'out'.*'acc' element \[0, 0\]"):
        from tilecc.klr.interp import interpret_kernel
        interpret_kernel(kb.kernel(), kb.values)


@pytest.mark.parametrize("dtype", ["bf16", "f32"], ids=str)
def test_vector_engine_transpose(dtype):
    rng = np.random.default_rng(9)
    dt = INPUT_DTYPES[dtype]
    data = values(dt, (32, 4, 8), rng)
    kb = KernelBuilder()
    src = kb.load("src", data, dt)
    dst = kb.tile("t", dt, (32, 32))
    kb.add(k.Transpose(dst, src, None, k.Engine.dve))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim["out"].astype(np.float32),
                                  data.reshape(32, 32).T.astype(np.float32))


@pytest.mark.parametrize("axes", [k.TransposeOps.WZXY, k.TransposeOps.XYZW, k.TransposeOps.XZYW],
                         ids=lambda a: a.name)
def test_dma_transpose_permutations(axes):
    rng = np.random.default_rng(int(axes))
    data = values(BF16, (2, 3, 4, 5), rng)
    perm = k.TRANSPOSE_PERMUTATION[axes]
    want = data.transpose(perm)
    kb = KernelBuilder()
    src = kb.arg("src", data, BF16)
    dst = kb.tile("t", BF16, want.shape)
    kb.add(k.DmaTranspose(dst, src, axes))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim["out"].view(np.uint16), want.view(np.uint16))


def gather_kernel(table, index, oob=k.DmaBounds.error, scatter=False, width=None):
    kb = KernelBuilder()
    rows, cols = table.shape
    width = width or cols
    hbm = kb.arg("table", table, F32)
    idx = kb.load("idx", index, k.Dtype.int32)
    row0 = k.AccessPattern(hbm, 1, (k.APPair(1, width),), 0, cols - width)
    if scatter:
        src = kb.load("src", np.arange(len(index) * width, dtype=np.float32).reshape(-1, width), F32)
        out = kb.out("out", F32, table.shape)
        kb.add(k.NcDmaCopy(out, hbm))
        kb.add(k.IndirectDmaCopy(k.AccessPattern(out, 1, (k.APPair(1, width),), 0, cols - width),
                                 src, idx, scatter=True, oob_mode=oob))
    else:
        dst = kb.tile("rows", F32, (len(index), width))
        kb.add(k.MemSet(dst, k.Immediate(-1.0), F32))
        kb.add(k.IndirectDmaCopy(dst, row0, idx, oob_mode=oob))
        kb.store("out", dst)
    return kb


@pytest.mark.parametrize("scatter", [False, True], ids=["gather", "scatter"])
def test_indirect_rows_with_oob_skip(scatter):
    rng = np.random.default_rng(4)
    table = values(F32, (50, 6), rng)
    index = np.array([3, 0, 49, 50, -1, 7, 2**31 - 1, 12], np.int32).reshape(-1, 1)
    sim, ref = gather_kernel(table, index, k.DmaBounds.skip, scatter, width=4).run()
    assert_agree(sim, ref, exact=True)
    inside = (index[:, 0] >= 0) & (index[:, 0] < 50)
    if scatter:
        want = table.copy()
        want[index[inside, 0], 2:] = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)[inside]
    else:
        want = np.full((8, 4), -1.0, np.float32)
        want[inside] = table[index[inside, 0], 2:]
    np.testing.assert_array_equal(sim["out"], want)


def test_indirect_out_of_bounds_is_an_error_on_both():
    table = np.zeros((4, 2), np.float32)
    kb = gather_kernel(table, np.array([[1], [4]], np.int32))
    assert kb.run_or_reject() is None
    with pytest.raises(SimError, match="index 4 of partition 1 is outside the 4 rows"):
        kb.run()
