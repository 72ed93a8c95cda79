"""TensorScalar / NcScalarTensorTensor: codegen + simulator == KLR interpreter, every AluOp."""

from __future__ import annotations

import numpy as np
import pytest

from diff_kernels import BF16, F32, I32, U32, KernelBuilder, assert_agree, values
from tilecc.errors import InterpError, SimError
from tilecc.klr import ast as k

A = k.AluOp
R = k.TensorScalarReverseOps
BITWISE = sorted(k.BITWISE_ALU_OPS)
ARITH = sorted(set(A) - k.BITWISE_ALU_OPS)
DTYPES = {"f32": F32, "bf16": BF16, "i32": I32, "u32": U32}


def operand_for(op: A, dtype: k.Dtype) -> k.Immediate:
    if op in k.BITWISE_ALU_OPS:
        return k.Immediate(3.0)  # the klr tool writes constants as float32
    return k.Immediate(-1.5 if dtype in (F32, BF16) else 3.0)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", list(A), ids=lambda o: o.name)
def test_single_op_with_immediate(op, dtype):
    dt = DTYPES[dtype]
    rng = np.random.default_rng(int(op) * 7 + len(dtype))
    kb = KernelBuilder()
    src = kb.load("a", values(dt, (64, 96), rng), dt)
    dst = kb.tile("t", dt, (64, 96))
    kb.add(k.TensorScalar(dst, src, operand_for(op, dt), op))
    kb.store("out", dst)
    if op in k.BITWISE_ALU_OPS and dt in (F32, BF16):
        with pytest.raises(SimError, match="integer data"):
            kb.run()
        return
    sim, ref = kb.run()
    assert_agree(sim, ref, exact=True)


@pytest.mark.parametrize("reverse", list(R), ids=lambda r: r.name)
@pytest.mark.parametrize("op0, op1", [
    (A.subtract, A.divide), (A.divide, A.subtract), (A.mult, A.add), (A.pow, A.mod),
    (A.max, A.min), (A.is_ge, A.subtract), (A.average, A.rsqrt), (A.abs, A.bypass),
    (A.logical_xor, A.not_equal),
], ids=lambda o: o.name)
def test_two_ops_with_partition_operands(op0, op1, reverse):
    rng = np.random.default_rng(int(op0) + 31 * int(op1) + 5 * int(reverse))
    kb = KernelBuilder()
    src = kb.load("a", values(F32, (128, 33), rng), F32)
    s0 = kb.load("s0", values(F32, (128, 1), rng), F32)
    dst = kb.tile("t", F32, (128, 33))
    kb.add(k.TensorScalar(dst, src, s0, op0, k.Immediate(0.75), op1, reverse))
    kb.store("out", dst)
    assert_agree(*kb.run(), exact=True)


@pytest.mark.parametrize("dtype", ["i32", "u32"])
@pytest.mark.parametrize("op", BITWISE, ids=lambda o: o.name)
def test_bitwise_with_partition_shift_counts(op, dtype):
    dt = DTYPES[dtype]
    rng = np.random.default_rng(int(op))
    kb = KernelBuilder()
    src = kb.load("a", values(dt, (128, 40), rng), dt)
    counts = kb.load("c", np.arange(128).astype(np.dtype(np.int32 if dt == I32 else np.uint32)).reshape(128, 1) % 40, dt)
    dst = kb.tile("t", dt, (128, 40))
    kb.add(k.TensorScalar(dst, src, counts, op, k.Immediate(1), A.bitwise_xor, R.none))
    kb.store("out", dst)
    assert_agree(*kb.run())


@pytest.mark.parametrize("reverse", list(R), ids=lambda r: r.name)
def test_bitwise_then_arithmetic_as_the_klr_tool_writes_it(reverse):
    # k05: bitwise_not then add 1 (two's complement negation through float32)
    rng = np.random.default_rng(5)
    kb = KernelBuilder()
    src = kb.load("a", values(I32, (128, 64), rng), I32)
    dst = kb.tile("t", I32, (128, 64))
    kb.add(k.TensorScalar(dst, src, k.Immediate(0.0), A.bitwise_not, k.Immediate(1.0), A.add, reverse))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref)
    if reverse in (R.none, R.second):
        a = kb.values["a"]
        small = np.abs(a.astype(np.int64)) < 2 ** 24
        np.testing.assert_array_equal(sim["out"][small], -a[small])


@pytest.mark.parametrize("shape", [(1, 1), (128, 2048), (8, 3, 5), (16, 2, 3, 4)], ids=str)
@pytest.mark.parametrize("dtype", ["f32", "bf16", "i32"])
def test_shapes(shape, dtype):
    dt = DTYPES[dtype]
    rng = np.random.default_rng(len(shape))
    kb = KernelBuilder()
    src = kb.load("a", values(dt, shape, rng), dt)
    dst = kb.tile("t", dt, shape)
    kb.add(k.TensorScalar(dst, src, k.Immediate(2.5), A.mult, k.Immediate(-1.0), A.add, R.none))
    kb.store("out", dst)
    assert_agree(*kb.run(), exact=True)


@pytest.mark.parametrize("start, count", [(32, 32), (64, 32), (96, 32), (64, 64), (0, 128)])
def test_partition_offsets(start, count):
    rng = np.random.default_rng(start + count)
    kb = KernelBuilder()
    src = kb.load("a", values(F32, (128, 24), rng), F32)
    dst = kb.tile("t", F32, (128, 24))
    kb.add(k.MemSet(dst, k.Immediate(-7.0), F32))
    window = k.AccessPattern(dst, count, (k.APPair(1, 24),), start, 0)
    source = k.AccessPattern(src, count, (k.APPair(1, 24),), start, 0)
    kb.add(k.TensorScalar(window, source, k.Immediate(3.0), A.subtract))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, exact=True)
    out = sim["out"]
    np.testing.assert_array_equal(out[:start], -7.0)
    np.testing.assert_array_equal(out[start + count:], -7.0)


@pytest.mark.parametrize("reverse", list(R), ids=lambda r: r.name)
@pytest.mark.parametrize("op0, op1", [(A.mult, A.add), (A.subtract, A.divide), (A.max, A.subtract),
                                      (A.divide, A.is_lt)], ids=lambda o: o.name)
def test_scalar_tensor_tensor(op0, op1, reverse):
    rng = np.random.default_rng(int(op0) * 3 + int(reverse))
    kb = KernelBuilder()
    data = kb.load("a", values(F32, (96, 48), rng), F32)
    other = kb.load("b", values(F32, (96, 48), rng), F32)
    s0 = kb.load("s", values(F32, (96, 1), rng), F32)
    dst = kb.tile("t", F32, (96, 48))
    kb.add(k.NcScalarTensorTensor(dst, data, s0, other, op0, op1, reverse))
    kb.add(k.NcScalarTensorTensor(dst, dst, k.Immediate(0.5), other, op1, op0, reverse))
    kb.store("out", dst)
    assert_agree(*kb.run(), exact=True)


def test_bitwise_on_float_is_rejected_by_both():
    kb = KernelBuilder()
    src = kb.load("a", np.ones((4, 4), np.float32), F32)
    dst = kb.tile("t", F32, (4, 4))
    kb.add(k.TensorScalar(dst, src, k.Immediate(1.0), A.bitwise_and))
    kb.store("out", dst)
    with pytest.raises(SimError, match="TensorScalar-1.*bitwise_and needs integer data"):
        kb.run()
    from tilecc.klr.interp import interpret_kernel
    with pytest.raises(InterpError, match=r"body\[1\].*bitwise_and"):
        interpret_kernel(kb.kernel(), kb.values)


@pytest.mark.parametrize("dtype", [k.Dtype.float8e4, k.Dtype.float8e5, k.Dtype.float8_e4m3fn,
                                   k.Dtype.float16], ids=lambda d: d.name)
def test_narrow_float_inputs_and_outputs(dtype):
    """fp8 / fp16 tiles: read widened to float32, results rounded to nearest-even (ml_dtypes),
    out-of-range values to inf (e4m3 / e5m2) or NaN (e4m3fn)."""
    rng = np.random.default_rng(int(dtype))
    kb = KernelBuilder()
    src = kb.load("a", values(dtype, (64, 40), rng, low=-20, high=20), dtype)
    dst = kb.tile("t", dtype, (64, 40))
    kb.add(k.TensorScalar(dst, src, k.Immediate(12.5), A.mult, k.Immediate(-3.0), A.add))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, exact=True)
    a = kb.values["a"].astype(np.float32)
    want = (a * np.float32(12.5) + np.float32(-3.0)).astype(sim["out"].dtype)
    np.testing.assert_array_equal(sim["out"].astype(np.float32), want.astype(np.float32))
