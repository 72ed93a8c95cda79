"""TensorTensor for every AluOp and dtype, and the data-movement operators (MemSet, Iota,
NcCopy, NcDmaCopy with accumulate): codegen + simulator == KLR interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from diff_kernels import BF16, F32, I32, U32, KernelBuilder, assert_agree, values
from tilecc.errors import SimError
from tilecc.klr import ast as k

A = k.AluOp
DTYPES = {"f32": F32, "bf16": BF16, "i32": I32, "u32": U32}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", list(A), ids=lambda o: o.name)
def test_every_op(op, dtype):
    dt = DTYPES[dtype]
    rng = np.random.default_rng(int(op) + 100 * len(dtype))
    kb = KernelBuilder()
    a = kb.load("a", values(dt, (128, 80), rng), dt)
    b_values = values(dt, (128, 80), rng)
    if op in (A.arith_shift_left, A.arith_shift_right, A.logical_shift_left, A.logical_shift_right) and dt in (I32, U32):
        b_values = (np.arange(128 * 80).reshape(128, 80) % 40).astype(b_values.dtype)
    b = kb.load("b", b_values, dt)
    dst = kb.tile("t", dt, (128, 80))
    kb.add(k.TensorTensor(dst, a, b, op, engine=k.Engine.dve))
    kb.store("out", dst)
    if op in k.BITWISE_ALU_OPS and dt in (F32, BF16):
        with pytest.raises(SimError, match="integer data"):
            kb.run()
        return
    assert_agree(*kb.run(), exact=True)


@pytest.mark.parametrize("shape", [(1, 1), (128, 2048), (128, 4, 4, 8)], ids=str)
def test_shapes_and_mixed_output_dtype(shape):
    rng = np.random.default_rng(len(shape))
    kb = KernelBuilder()
    a = kb.load("a", values(F32, shape, rng), F32)
    b = kb.load("b", values(F32, shape, rng), F32)
    dst = kb.tile("t", BF16, shape)
    kb.add(k.TensorTensor(dst, a, b, A.subtract, engine=k.Engine.dve))
    kb.store("out", dst)
    assert_agree(*kb.run(), exact=True)


def test_strided_and_broadcast_accesses():
    """Every other column of a, and b's first column broadcast with a step-0 pair."""
    rng = np.random.default_rng(3)
    kb = KernelBuilder()
    a = kb.load("a", values(F32, (64, 40), rng), F32)
    b = kb.load("b", values(F32, (64, 40), rng), F32)
    dst = kb.tile("t", F32, (64, 20))
    evens = k.AccessPattern(a, 64, (k.APPair(2, 20),), 0, 0)
    first_col = k.AccessPattern(b, 64, (k.APPair(0, 20),), 0, 0)
    kb.add(k.TensorTensor(dst, evens, first_col, A.mult, engine=k.Engine.pool))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, exact=True)
    with np.errstate(invalid="ignore", over="ignore"):
        want = kb.values["a"][:, ::2] * kb.values["b"][:, :1]
    np.testing.assert_array_equal(sim["out"], want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("value", [0.0, -2.5, 1e10, float("nan"), 7, -1], ids=str)
def test_memset(dtype, value):
    dt = DTYPES[dtype]
    kb = KernelBuilder()
    dst = kb.tile("t", dt, (128, 3, 5))
    kb.add(k.MemSet(dst, k.Immediate(value), dt))
    kb.store("out", dst)
    assert_agree(*kb.run(), exact=True)


@pytest.mark.parametrize("dtype", [F32, I32, BF16], ids=lambda d: d.name)
def test_iota(dtype):
    kb = KernelBuilder()
    dst = kb.tile("t", dtype, (128, 4, 6))
    pattern = k.DataPattern(-50, (k.APPair(6, 4), k.APPair(-1, 6)), 3)
    kb.add(k.Iota(dst, pattern))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, exact=True)
    p, x, y = np.meshgrid(np.arange(128), np.arange(4), np.arange(6), indexing="ij")
    np.testing.assert_array_equal(sim["out"].astype(np.float64), (-50 + 3 * p + 6 * x - y).astype(sim["out"].dtype).astype(np.float64))


@pytest.mark.parametrize("src_dtype, dst_dtype", [(F32, BF16), (BF16, F32), (F32, I32), (I32, F32),
                                                  (I32, U32), (F32, k.Dtype.float8e4),
                                                  (F32, k.Dtype.float8e5), (F32, k.Dtype.float16)],
                         ids=str)
def test_copies_convert(src_dtype, dst_dtype):
    rng = np.random.default_rng(5)
    kb = KernelBuilder()
    src = kb.load("a", values(src_dtype, (128, 64), rng, low=-1e3, high=1e3), src_dtype)
    mid = kb.tile("m", dst_dtype, (128, 64))
    kb.add(k.NcCopy(mid, src))
    kb.store("out", mid)
    assert_agree(*kb.run(), exact=True)


def test_dma_accumulate_into_hbm():
    rng = np.random.default_rng(6)
    kb = KernelBuilder()
    tile = kb.load("a", values(F32, (128, 32), rng), F32)
    acc = kb.arg("acc", values(F32, (128, 32), rng), F32)
    kb.outputs.append(acc)  # in/out argument: read, accumulated into, returned
    kb.add(k.NcDmaCopy(acc, tile, k.DgeComputeOp.add))
    sim, ref = kb.run()
    assert_agree(sim, ref, exact=True)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(sim["acc"], kb.values["acc"] + kb.values["a"])
