"""Activation engine (NcActivate, ActivationReduce, Activate2), Exponential, Reciprocal:
codegen + simulator == KLR interpreter, with the accumulator commands."""

from __future__ import annotations

import numpy as np
import pytest

from diff_kernels import BF16, F32, KernelBuilder, assert_agree, values
from tilecc.klr import ast as k

A = k.AluOp
Fn = k.ActivationFunc
Cmd = k.AccumCmd
POSITIVE_ONLY = {Fn.log, Fn.sqrt, Fn.rsqrt}


def inputs_for(func: Fn, shape, rng):
    if func in POSITIVE_ONLY:
        return rng.uniform(0.01, 50.0, size=shape).astype(np.float32)
    return values(F32, shape, rng, low=-6.0, high=6.0)


@pytest.mark.parametrize("out_dtype", [F32, BF16], ids=lambda d: d.name)
@pytest.mark.parametrize("func", list(Fn), ids=lambda f: f.name)
def test_every_function_with_scale_and_bias(func, out_dtype):
    rng = np.random.default_rng(int(func))
    kb = KernelBuilder()
    src = kb.load("a", inputs_for(func, (128, 64), rng), F32)
    bias = kb.load("b", rng.uniform(0.0, 0.5, size=(128, 1)).astype(np.float32), F32)
    dst = kb.tile("t", out_dtype, (128, 64))
    kb.add(k.NcActivate(dst, src, Cmd.Idle, func, k.Immediate(0.875), bias))
    kb.store("out", dst)
    assert_agree(*kb.run(), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("func", [Fn.exp, Fn.tanh, Fn.gelu, Fn.silu, Fn.copy], ids=lambda f: f.name)
def test_tile_scale_and_zero_bias(func):
    rng = np.random.default_rng(11)
    kb = KernelBuilder()
    src = kb.load("a", values(F32, (64, 3, 7), rng, low=-3, high=3), F32)
    scale = kb.load("s", values(F32, (64, 1), rng, specials=False, low=-2, high=2), F32)
    dst = kb.tile("t", F32, (64, 3, 7))
    kb.add(k.NcActivate(dst, src, Cmd.Idle, func, scale))
    # a second bias-less activation shares the compiler-generated zero bias
    kb.add(k.NcActivate(dst, dst, Cmd.Idle, Fn.copy, k.Immediate(2.0)))
    kb.store("out", dst)
    assert_agree(*kb.run(), rtol=2e-5, atol=2e-6)


def test_activation_accumulate_chain():
    """ZeroAccumulate, Accumulate, Zero, then LoadAccumulate (which adds, the activation
    engine having no load value): the registers carry over."""
    rng = np.random.default_rng(3)
    kb = KernelBuilder()
    src = kb.load("a", values(F32, (128, 40), rng, specials=False), F32)
    dst = kb.tile("t", F32, (128, 40))
    sums = [kb.tile(f"r{i}", F32, (128, 1)) for i in range(4)]
    for cmd, res in zip([Cmd.ZeroAccumulate, Cmd.Accumulate, Cmd.Zero, Cmd.LoadAccumulate], sums):
        kb.add(k.NcActivate(dst, src, cmd, Fn.exp, k.Immediate(0.5), None, A.add, res))
    for i, res in enumerate(sums):
        kb.store(f"sum{i}", res)
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, rtol=1e-5)
    rows = np.exp(kb.values["a"].astype(np.float64) * 0.5).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(sim["sum0"], rows, rtol=1e-5)
    np.testing.assert_allclose(sim["sum1"], 2 * rows, rtol=1e-5)
    np.testing.assert_array_equal(sim["sum2"], 0.0)
    np.testing.assert_allclose(sim["sum3"], rows, rtol=1e-5)


def test_activation_reduce_on_a_partition_window():
    rng = np.random.default_rng(4)
    kb = KernelBuilder()
    src = kb.load("a", values(F32, (128, 16), rng, specials=False), F32)
    dst = kb.tile("t", F32, (128, 16))
    res = kb.tile("r", F32, (128, 1))
    kb.add(k.MemSet(dst, k.Immediate(0.0), F32))
    kb.add(k.MemSet(res, k.Immediate(-1.0), F32))
    win = lambda t, n: k.AccessPattern(t, 32, (k.APPair(1, n),), 64, 0)  # noqa: E731
    kb.add(k.ActivationReduce(win(dst, 16), win(src, 16), Cmd.ZeroAccumulate, Fn.square,
                              k.Immediate(1.0), None, A.add, win(res, 1)))
    kb.store("out", dst)
    kb.store("sums", res)
    sim, ref = kb.run()
    assert_agree(sim, ref, rtol=1e-5)
    a = kb.values["a"]
    np.testing.assert_allclose(sim["sums"][64:96, 0], (a[64:96] ** 2).sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(sim["sums"][:64], -1.0)


@pytest.mark.parametrize("reduce_op, cmd", [(A.add, Cmd.ZeroAccumulate), (A.max, Cmd.ZeroAccumulate),
                                            (A.min, Cmd.ZeroAccumulate), (A.add, Cmd.Idle)],
                         ids=str)
@pytest.mark.parametrize("op0, op1, rev0, rev1", [
    (A.mult, A.add, False, False), (A.subtract, A.divide, True, False),
    (A.subtract, A.max, False, True), (A.bypass, A.bypass, False, False),
], ids=str)
def test_activate2(op0, op1, rev0, rev1, reduce_op, cmd):
    rng = np.random.default_rng(int(op0) + int(op1))
    kb = KernelBuilder()
    src = kb.load("a", values(F32, (96, 50), rng, low=-4, high=4), F32)
    imm1 = kb.load("s", values(F32, (96, 1), rng, specials=False, low=1, high=2), F32)
    dst = kb.tile("t", BF16, (96, 50))
    res = kb.tile("r", F32, (96, 1))
    kb.add(k.MemSet(res, k.Immediate(0.0), F32))
    kb.add(k.Activate2(dst, src, op0, op1, k.Immediate(1.25), imm1, Fn.tanh, k.Immediate(0.0),
                       reduce_op, res if cmd != Cmd.Idle else None, cmd, rev0, rev1))
    kb.store("out", dst)
    kb.store("red", res)
    assert_agree(*kb.run(), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("with_sum", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (128, 2048), (32, 4, 8)], ids=str)
def test_exponential_softmax_numerator(shape, with_sum):
    rng = np.random.default_rng(len(shape))
    kb = KernelBuilder()
    src = kb.load("a", values(F32, shape, rng, low=-20, high=5), F32)
    row_max = kb.load("m", np.full((shape[0], 1), 5.0, np.float32), F32)
    dst = kb.tile("t", F32, shape)
    res = kb.tile("r", F32, (shape[0], 1)) if with_sum else None
    kb.add(k.Exponential(dst, src, row_max, res, Cmd.ZeroAccumulate, k.Immediate(0.0)))
    kb.store("out", dst)
    if res is not None:
        kb.store("sum", res)
    assert_agree(*kb.run(), rtol=1e-5, atol=1e-6)


def test_exponential_load_then_accumulate():
    rng = np.random.default_rng(8)
    kb = KernelBuilder()
    src = kb.load("a", values(F32, (64, 20), rng, specials=False, low=-3, high=1), F32)
    init = kb.load("i", values(F32, (64, 1), rng, specials=False), F32)
    dst = kb.tile("t", F32, (64, 20))
    r0, r1 = kb.tile("r0", F32, (64, 1)), kb.tile("r1", F32, (64, 1))
    kb.add(k.Exponential(dst, src, k.Immediate(1.0), r0, Cmd.LoadAccumulate, init))
    kb.add(k.Exponential(dst, src, k.Immediate(0.0), r1, Cmd.Accumulate, k.Immediate(0.0)))
    kb.store("s0", r0)
    kb.store("s1", r1)
    sim, ref = kb.run()
    assert_agree(sim, ref, rtol=1e-5)
    a = kb.values["a"].astype(np.float64)
    want0 = kb.values["i"][:, 0] + np.exp(a - 1).sum(axis=1)
    np.testing.assert_allclose(sim["s0"][:, 0], want0, rtol=1e-5)
    np.testing.assert_allclose(sim["s1"][:, 0], want0 + np.exp(a).sum(axis=1), rtol=1e-5)


@pytest.mark.parametrize("dtype", [F32, BF16], ids=lambda d: d.name)
def test_reciprocal(dtype):
    rng = np.random.default_rng(9)
    kb = KernelBuilder()
    src = kb.load("a", values(dtype, (128, 300), rng), dtype)
    dst = kb.tile("t", dtype, (128, 300))
    kb.add(k.Reciprocal(dst, src))
    kb.store("out", dst)
    assert_agree(*kb.run(), exact=True)


@pytest.mark.parametrize("func", [Fn.exp, Fn.sigmoid, Fn.relu, Fn.square, Fn.gelu_apprx_tanh],
                         ids=lambda f: f.name)
def test_bf16_input_and_accumulate(func):
    rng = np.random.default_rng(int(func) + 50)
    kb = KernelBuilder()
    src = kb.load("a", values(BF16, (128, 96), rng, specials=False, low=-3, high=3), BF16)
    dst = kb.tile("t", BF16, (128, 96))
    res = kb.tile("r", F32, (128, 1))
    kb.add(k.NcActivate(dst, src, Cmd.ZeroAccumulate, func, k.Immediate(1.5), None, A.add, res))
    kb.store("out", dst)
    kb.store("sum", res)
    assert_agree(*kb.run(), rtol=2e-5, atol=1e-5)
