"""TensorScalarCumulative (TensorScalarCache) and TensorTensorScan (TensorScalarPtr scan):
codegen + simulator == KLR interpreter, with the accumulate commands chaining registers."""

from __future__ import annotations

import numpy as np
import pytest

from diff_kernels import F32, I32, KernelBuilder, assert_agree, values
from tilecc.errors import InterpError, SimError
from tilecc.klr import ast as k

A = k.AluOp
R = k.TensorScalarReverseOps
Cmd = k.AccumCmd


@pytest.mark.parametrize("reverse", list(R), ids=lambda r: r.name)
@pytest.mark.parametrize("op0, op1", [
    (A.mult, A.add), (A.add, A.max), (A.subtract, A.min), (A.bypass, A.mult),
    (A.add, A.subtract), (A.divide, A.add),
], ids=str)
def test_cumulative(op0, op1, reverse):
    rng = np.random.default_rng(int(op0) + 7 * int(op1) + int(reverse))
    kb = KernelBuilder()
    low, high = (0.9, 1.1) if op1 == A.mult else (-3.0, 3.0)
    src = kb.load("a", values(F32, (128, 6, 10), rng, specials=False, low=low, high=high), F32)
    dst = kb.tile("t", F32, (128, 6, 10))
    kb.add(k.TensorScalarCumulative(dst, src, op0, op1, k.Immediate(1.5), None, Cmd.ZeroAccumulate, reverse))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, rtol=1e-5, atol=1e-5)
    if (op0, op1, reverse) == (A.mult, A.add, R.none):
        want = np.cumsum(kb.values["a"].reshape(128, -1).astype(np.float64) * 1.5, axis=1)
        np.testing.assert_allclose(sim["out"].reshape(128, -1), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cmd", [Cmd.Idle, Cmd.Zero], ids=lambda c: c.name)
def test_cumulative_idle_and_zero_start_from_the_identity(cmd):
    rng = np.random.default_rng(4)
    kb = KernelBuilder()
    src = kb.load("a", values(F32, (32, 12), rng, specials=False), F32)
    d0, d1 = kb.tile("d0", F32, (32, 12)), kb.tile("d1", F32, (32, 12))
    kb.add(k.TensorScalarCumulative(d0, src, A.bypass, A.add, k.Immediate(0.0), None, Cmd.ZeroAccumulate))
    kb.add(k.TensorScalarCumulative(d1, src, A.bypass, A.max, k.Immediate(0.0), None, cmd))
    kb.store("out", d1)
    sim, ref = kb.run()
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim["out"], np.maximum.accumulate(kb.values["a"], axis=1))


def test_cumulative_load_then_continue():
    """LoadAccumulate seeds from imm1 (a [P,1] tile); Accumulate continues the register."""
    rng = np.random.default_rng(21)
    kb = KernelBuilder()
    src = kb.load("a", values(F32, (64, 32), rng, specials=False), F32)
    seed = kb.load("s", values(F32, (64, 1), rng, specials=False), F32)
    d0, d1 = kb.tile("d0", F32, (64, 32)), kb.tile("d1", F32, (64, 32))
    kb.add(k.TensorScalarCumulative(d0, src, A.bypass, A.add, k.Immediate(0.0), seed, Cmd.LoadAccumulate))
    kb.add(k.TensorScalarCumulative(d1, src, A.bypass, A.add, k.Immediate(0.0), None, Cmd.Accumulate))
    kb.store("o0", d0)
    kb.store("o1", d1)
    sim, ref = kb.run()
    assert_agree(sim, ref, rtol=1e-5, atol=1e-5)
    a, s = kb.values["a"].astype(np.float64), kb.values["s"].astype(np.float64)
    first = s + np.cumsum(a, axis=1)
    np.testing.assert_allclose(sim["o0"], first, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sim["o1"], first[:, -1:] + np.cumsum(a, axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reverse", list(R), ids=lambda r: r.name)
@pytest.mark.parametrize("op0, op1", [(A.mult, A.add), (A.add, A.max), (A.subtract, A.mult),
                                      (A.max, A.subtract)], ids=str)
def test_tensor_tensor_scan(op0, op1, reverse):
    rng = np.random.default_rng(int(op0) * 5 + int(op1))
    kb = KernelBuilder()
    a = kb.load("a", values(F32, (128, 48), rng, specials=False, low=-1.0, high=1.0), F32)
    b = kb.load("b", values(F32, (128, 48), rng, specials=False, low=-1.0, high=1.0), F32)
    dst = kb.tile("t", F32, (128, 48))
    kb.add(k.TensorTensorScan(dst, a, b, op0, op1, reverse, k.Immediate(0.5), Cmd.ZeroAccumulate))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, rtol=1e-5, atol=1e-5)


def test_scan_is_a_linear_recurrence():
    """r_i = a_i * r_{i-1} + b_i with r_{-1} = init (a [P,1] tile), then continued."""
    rng = np.random.default_rng(2)
    kb = KernelBuilder()
    a = kb.load("a", values(F32, (32, 16), rng, specials=False, low=0.5, high=1.0), F32)
    b = kb.load("b", values(F32, (32, 16), rng, specials=False), F32)
    init = kb.load("i", values(F32, (32, 1), rng, specials=False), F32)
    d0, d1 = kb.tile("d0", F32, (32, 16)), kb.tile("d1", F32, (32, 16))
    kb.add(k.TensorTensorScan(d0, a, b, A.mult, A.add, R.none, init, Cmd.ZeroAccumulate))
    kb.add(k.TensorTensorScan(d1, a, b, A.mult, A.add, R.none, k.Immediate(0.0), Cmd.Accumulate))
    kb.store("o0", d0)
    kb.store("o1", d1)
    sim, ref = kb.run()
    assert_agree(sim, ref, rtol=1e-5, atol=1e-5)
    av, bv = kb.values["a"].astype(np.float64), kb.values["b"].astype(np.float64)
    r = kb.values["i"][:, 0].astype(np.float64)
    for out in ("o0", "o1"):
        want = np.empty_like(av)
        for i in range(16):
            r = av[:, i] * r + bv[:, i]
            want[:, i] = r
        np.testing.assert_allclose(sim[out], want, rtol=1e-5, atol=1e-5)


def test_bitwise_scan_is_rejected_by_both():
    kb = KernelBuilder()
    a = kb.load("a", np.ones((4, 4), np.int32), I32)
    dst = kb.tile("t", I32, (4, 4))
    kb.add(k.TensorTensorScan(dst, a, a, A.bitwise_or, A.add, R.none, k.Immediate(0), Cmd.ZeroAccumulate))
    kb.store("out", dst)
    with pytest.raises(SimError, match="bitwise_or is a bitvec op"):
        kb.run()
    from tilecc.klr.interp import interpret_kernel
    with pytest.raises(InterpError, match="bitwise_or is bitwise"):
        interpret_kernel(kb.kernel(), kb.values)


@pytest.mark.parametrize("dtype", [k.Dtype.bfloat16, I32, k.Dtype.uint32], ids=lambda d: d.name)
@pytest.mark.parametrize("op1", [A.add, A.max, A.min], ids=lambda o: o.name)
def test_cumulative_and_scan_other_dtypes(op1, dtype):
    """bf16 / integer tiles: the running value is float32, written in the tile's dtype."""
    rng = np.random.default_rng(int(op1))
    kb = KernelBuilder()
    raw = values(dtype, (64, 30), rng, specials=False)
    if dtype != k.Dtype.bfloat16:
        raw = raw % 1000  # sums stay exact in float32
    src = kb.load("a", raw, dtype)
    other = kb.load("b", raw[:, ::-1].copy(), dtype)
    d0, d1 = kb.tile("d0", dtype, (64, 30)), kb.tile("d1", dtype, (64, 30))
    kb.add(k.TensorScalarCumulative(d0, src, A.mult, op1, k.Immediate(2.0), None, Cmd.ZeroAccumulate))
    kb.add(k.TensorTensorScan(d1, src, other, A.add, op1, R.none, k.Immediate(1.0), Cmd.ZeroAccumulate))
    kb.store("o0", d0)
    kb.store("o1", d1)
    sim, ref = kb.run()
    assert_agree(sim, ref, exact=True)
