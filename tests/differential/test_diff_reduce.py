"""TensorReduce (free axes), TensorPartitionReduce (axis C) and TensorScalarReduce:
codegen + simulator == KLR interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from diff_kernels import BF16, F32, I32, U32, KernelBuilder, assert_agree, values
from tilecc.errors import InterpError, SimError
from tilecc.klr import ast as k

A = k.AluOp
Dim = k.TensorSubDim
FLOAT_OPS = [A.add, A.max, A.min, A.mult, A.subtract, A.average]
INT_OPS = [A.bitwise_and, A.bitwise_or, A.bitwise_xor]


@pytest.mark.parametrize("negated", [False, True])
@pytest.mark.parametrize("op_dim", list(Dim), ids=lambda d: d.name)
@pytest.mark.parametrize("op", FLOAT_OPS, ids=lambda o: o.name)
def test_free_axis_reduce_float(op, op_dim, negated):
    rng = np.random.default_rng(int(op) * 4 + int(op_dim))
    shape = (64, 2, 3, 4, 5)
    kb = KernelBuilder()
    low, high = (0.5, 1.5) if op == A.mult else (-8.0, 8.0)
    src = kb.load("a", values(F32, shape, rng, specials=op != A.mult, low=low, high=high), F32)
    kept = shape[: len(shape) - int(op_dim) - 1]
    dst = kb.tile("t", F32, kept)
    kb.add(k.TensorReduce(dst, src, op, op_dim, negated))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, rtol=1e-5, atol=1e-5)
    if op == A.max and not negated:
        a = kb.values["a"]
        want = a.max(axis=tuple(range(len(kept), len(shape))))
        np.testing.assert_array_equal(sim["out"], want)


@pytest.mark.parametrize("dtype", [I32, U32], ids=lambda d: d.name)
@pytest.mark.parametrize("op", INT_OPS, ids=lambda o: o.name)
def test_free_axis_reduce_bitwise_is_exact(op, dtype):
    rng = np.random.default_rng(int(op))
    kb = KernelBuilder()
    src = kb.load("a", values(dtype, (128, 8, 16), rng), dtype)
    dst = kb.tile("t", dtype, (128, 1, 1))
    kb.add(k.TensorReduce(dst, src, op, Dim.XY, keepdims=True))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref)
    ufunc = {A.bitwise_and: np.bitwise_and, A.bitwise_or: np.bitwise_or, A.bitwise_xor: np.bitwise_xor}[op]
    np.testing.assert_array_equal(sim["out"][:, 0, 0], ufunc.reduce(kb.values["a"].reshape(128, -1), axis=1))


def test_reduce_to_bf16_and_from_int32_arithmetic():
    rng = np.random.default_rng(12)
    kb = KernelBuilder()
    ints = kb.load("i", values(I32, (32, 100), rng, specials=False) % 1000, I32)
    floats = kb.load("f", values(F32, (32, 100), rng), F32)
    isum, fmax = kb.tile("is", I32, (32, 1)), kb.tile("fm", BF16, (32, 1))
    kb.add(k.TensorReduce(isum, ints, A.add, Dim.X))
    kb.add(k.TensorReduce(fmax, floats, A.max, Dim.X, negated=True))
    kb.store("isum", isum)
    kb.store("fmax", fmax)
    sim, ref = kb.run()
    assert_agree(sim, ref)
    np.testing.assert_array_equal(sim["isum"][:, 0], kb.values["i"].astype(np.int64).sum(axis=1))


@pytest.mark.parametrize("parts", [32, 64, 128])
@pytest.mark.parametrize("op", [A.add, A.average, A.max], ids=lambda o: o.name)
def test_partition_reduce_float(op, parts):
    rng = np.random.default_rng(parts + int(op))
    kb = KernelBuilder()
    src = kb.load("a", values(F32, (parts, 64), rng, specials=False), F32)
    dst = kb.tile("t", F32, (1, 64))
    kb.add(k.TensorPartitionReduce(dst, op, src))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, rtol=1e-5, atol=1e-5)
    a = kb.values["a"].astype(np.float64)
    want = {A.add: a.sum(axis=0), A.average: a.mean(axis=0), A.max: a.max(axis=0)}[op]
    np.testing.assert_allclose(sim["out"][0], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", [A.bitwise_or, A.bitwise_and], ids=lambda o: o.name)
def test_partition_reduce_bitwise(op):
    rng = np.random.default_rng(int(op))
    kb = KernelBuilder()
    src = kb.load("a", values(I32, (64, 32), rng), I32)
    dst = kb.tile("t", I32, (1, 32))
    kb.add(k.TensorPartitionReduce(dst, op, src))
    kb.store("out", dst)
    assert_agree(*kb.run())


def test_partition_reduce_rejects_other_ops_on_both_sides():
    kb = KernelBuilder()
    src = kb.load("a", np.ones((32, 32), np.float32), F32)
    dst = kb.tile("t", F32, (1, 32))
    kb.add(k.TensorPartitionReduce(dst, A.divide, src))
    kb.store("out", dst)
    with pytest.raises(SimError, match="divide is not a reduction op"):
        kb.run()
    from tilecc.klr.interp import interpret_kernel
    with pytest.raises(InterpError, match="partition reduce op must be one of"):
        interpret_kernel(kb.kernel(), kb.values)


@pytest.mark.parametrize("reverse0", [False, True])
@pytest.mark.parametrize("op0, reduce_op", [
    (A.mult, A.add), (A.subtract, A.max), (A.add, A.min), (A.divide, A.add), (A.mult, A.mult),
    (A.subtract, A.subtract), (A.max, A.add),
], ids=str)
def test_tensor_scalar_reduce(op0, reduce_op, reverse0):
    rng = np.random.default_rng(int(op0) * 2 + int(reduce_op))
    kb = KernelBuilder()
    low, high = (0.9, 1.1) if reduce_op == A.mult else (-4.0, 4.0)
    src = kb.load("a", values(F32, (128, 3, 40), rng, specials=False, low=low, high=high), F32)
    s0 = kb.load("s", values(F32, (128, 1), rng, specials=False, low=0.5, high=1.5), F32)
    dst = kb.tile("t", BF16, (128, 3, 40))
    res = kb.tile("r", F32, (128, 1))
    kb.add(k.TensorScalarReduce(dst, src, s0, op0, reverse0, None, reduce_op, res))
    kb.store("out", dst)
    kb.store("red", res)
    sim, ref = kb.run()
    assert_agree(sim, ref, rtol=2e-5, atol=1e-4)


@pytest.mark.parametrize("op", [A.add, A.max, A.min, A.average], ids=lambda o: o.name)
@pytest.mark.parametrize("dtype", [BF16, I32, U32], ids=lambda d: d.name)
def test_free_axis_reduce_of_bf16_and_integer_tiles(dtype, op):
    """Arithmetic folds of bf16 / integer data go through float32; integer sums that stay
    below 2**24 are exact."""
    rng = np.random.default_rng(int(op) + 3)
    kb = KernelBuilder()
    raw = values(dtype, (96, 4, 25), rng)
    if dtype != BF16:
        raw = raw % 4096
    src = kb.load("a", raw, dtype)
    dst = kb.tile("t", dtype, (96, 4))
    kb.add(k.TensorReduce(dst, src, op, Dim.X))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, rtol=1e-5, atol=1e-5)
    if dtype != BF16 and op in (A.add, A.max, A.min):
        fold = {A.add: np.sum, A.max: np.max, A.min: np.min}[op]
        np.testing.assert_array_equal(sim["out"], fold(raw.astype(np.int64), axis=2).astype(raw.dtype))
