"""convolution, interpreter against XLA CPU on hand-written modules covering the
dimension-number variants: layouts (b01f / bf01 / f01b, kernels 01io / oi01 / i01o, a
transposed output), strides, positive and negative padding, lhs and rhs dilation, kernel
reversal (one entry for two dims when the other window is of size 1), feature groups, batch
groups, 1-d and 3-d windows, integer wrap-around (bit-exact), mixed s8 -> s32, pred, and
f32 / bf16 within a tight tolerance; then inf / NaN operands, where holes and padding
contribute nothing or multiply the kernel as XLA CPU chooses (interp/conv_zeros.py)."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import XlaJob, run_many_on_xla

pytestmark = pytest.mark.oracle

REPLICAS = 2


def conv(name: str, lhs: str, rhs: str, out: str, attrs: str) -> tuple[str, str]:
    return name, (f"HloModule c\nENTRY e {{\n  x = {lhs} parameter(0)\n  w = {rhs} parameter(1)\n"
                  f"  ROOT c = {out} convolution(x, w), {attrs}\n}}\n")


CASES = dict([
    conv("b01f same padding", "f32[2,8,8,3]", "f32[3,3,3,4]", "f32[2,8,8,4]",
         "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
    conv("bf01 stride, rhs dilation, feature groups", "f32[2,8,9,7]", "f32[8,2,3,3]",
         "f32[2,8,5,3]", "window={size=3x3 stride=2x1 pad=1_1x0_0 rhs_dilate=1x2}, "
         "dim_labels=bf01_oi01->bf01, feature_group_count=4"),
    conv("batch groups of two images", "f32[4,3,6,6]", "f32[6,3,2,2]", "f32[2,6,5,5]",
         "window={size=2x2}, dim_labels=bf01_oi01->bf01, batch_group_count=2"),
    conv("weight gradient layout f01b_i01o->01bf", "f32[3,8,8,2]", "f32[3,8,8,4]",
         "f32[3,3,2,4]", "window={size=8x8 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf"),
    conv("s32 1-d negative pad, lhs and rhs dilation, wrap-around", "s32[2,7,3]",
         "s32[3,3,5]", "s32[2,8,5]",
         "window={size=3 stride=2 pad=-1_2 lhs_dilate=3 rhs_dilate=2}, dim_labels=b0f_0io->b0f"),
    conv("s8 operands, s32 result, feature groups of one", "s8[1,4,5,6]", "s8[2,2,1,6]",
         "s32[1,3,4,6]", "window={size=2x2 pad=0_0x1_-1 stride=1x1}, "
         "dim_labels=b01f_01io->b01f, feature_group_count=6"),
    conv("rhs reversal, output layout f0b1", "f32[2,5,6,3]", "f32[2,2,3,4]", "f32[4,4,2,5]",
         "window={size=2x2 rhs_reversal=1x0}, dim_labels=b01f_01io->f0b1"),
    conv("3-d window", "f32[1,2,4,5,6]", "f32[4,2,2,3,2]", "f32[1,4,3,3,5]",
         "window={size=2x3x2 pad=0_0x0_0x0_0}, dim_labels=bf012_oi012->bf012"),
    conv("bf16 in, bf16 out", "bf16[2,6,6,4]", "bf16[3,3,4,5]", "bf16[2,6,6,5]",
         "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
    conv("bf16 operands, s32 result: the sums round to bf16 first", "bf16[2,6,6,16]",
         "bf16[3,3,16,4]", "s32[2,6,6,4]", "window={size=3x3 pad=1_1x1_1}, "
         "dim_labels=b01f_01io->b01f"),
    conv("pred: OR of ANDs, with padding and lhs dilation", "pred[2,5,5,3]", "pred[3,3,3,4]",
         "pred[2,11,11,4]", "window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2}, "
         "dim_labels=b01f_01io->b01f"),
    conv("rhs_reversal of one entry, the missing one for a window of size 1", "f32[2,6,5,3]",
         "f32[3,1,3,4]", "f32[2,4,5,4]", "window={size=3x1 rhs_reversal=1}, "
         "dim_labels=b01f_01io->b01f"),
    conv("s16 negative pad cropping all but the middle", "s16[2,3,9]", "s16[5,3,4]",
         "s16[2,5,2]", "window={size=4 pad=-2_-1 stride=2}, dim_labels=bf0_oi0->bf0"),
])


def case_inputs(module, seed: int) -> list[np.ndarray]:
    """Integers over their whole range (products wrap); floats standard normal, so sums
    stay finite and compare within a tolerance."""
    inputs = random_inputs(module, REPLICAS, seed)
    rng = np.random.default_rng(200 + seed)
    for k, x in enumerate(inputs):
        if x.dtype.kind not in "iub":
            inputs[k] = rng.standard_normal(x.shape).astype(x.dtype)
    return inputs


def test_convolution_equals_xla() -> None:
    jobs, runs = [], []
    for name, text in CASES.items():
        module = parse_module(text, name)
        for seed in (0, 1):
            inputs = case_inputs(module, seed)
            jobs.append(XlaJob("run", text, inputs, REPLICAS))
            runs.append((f"{name} seed {seed}", module, inputs))
    for (label, module, inputs), want in zip(runs, run_many_on_xla(jobs)):
        if isinstance(want, Exception):
            raise want
        (got,) = evaluate_module(module, inputs, REPLICAS)
        (w,) = want
        assert got.dtype == w.dtype and got.shape == w.shape, label
        if got.dtype.kind in "iub":
            np.testing.assert_array_equal(got, w, err_msg=label)
        elif got.dtype == ml_dtypes.bfloat16:  # one rounding to bf16 of nearly equal sums
            np.testing.assert_allclose(got.astype(np.float32), w.astype(np.float32),
                                       rtol=8e-3, atol=1e-2, err_msg=label)
        else:
            np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5, err_msg=label)


@pytest.mark.parametrize("name, message", [
    ("window size differs from the kernel", "window sizes [2, 2] do not match the kernel"),
    ("both group counts", "feature_group_count and batch_group_count are both above 1"),
    ("result shape", "does not match its operands (spatial sizes [6, 6])"),
    ("rhs_reversal missing for a window of size 3", "window rhs_reversal 1 does not have 2 "
     "entries"),
])
def test_bad_convolutions_are_refused(name: str, message: str) -> None:
    attrs = {"window size differs from the kernel":
             ("f32[1,8,8,2]", "window={size=2x2}, dim_labels=b01f_01io->b01f"),
             "both group counts":
             ("f32[1,6,6,2]", "window={size=3x3}, dim_labels=b01f_01io->b01f, "
              "feature_group_count=2, batch_group_count=2"),
             "result shape": ("f32[1,8,8,2]", "window={size=3x3}, dim_labels=b01f_01io->b01f"),
             "rhs_reversal missing for a window of size 3":
             ("f32[1,6,6,2]", "window={size=3x3 rhs_reversal=1}, dim_labels=b01f_01io->b01f")}
    out, attr = attrs[name]
    _, text = conv(name, "f32[1,8,8,4]", "f32[3,3,4,2]", out, attr)
    module = parse_module(text, name)
    inputs = [np.zeros((1,) + p.shape.dims, np.float32) for p in module.entry.parameters]
    with pytest.raises(InterpError, match=re.escape(message)):
        evaluate_module(module, inputs, 1)


def in_branch(lhs: str, rhs: str, out: str, attrs: str) -> str:
    """A convolution in the branches of a conditional, outside the entry computation
    (XLA keeps a conditional on a parameter)."""
    return (f"HloModule c\nbranch {{\n  p = ({lhs}, {rhs}) parameter(0)\n"
            f"  x = {lhs} get-tuple-element(p), index=0\n"
            f"  w = {rhs} get-tuple-element(p), index=1\n"
            f"  ROOT c = {out} convolution(x, w), {attrs}\n}}\n"
            f"ENTRY e {{\n  x = {lhs} parameter(0)\n  w = {rhs} parameter(1)\n"
            f"  k = s32[] parameter(2)\n  t = ({lhs}, {rhs}) tuple(x, w)\n"
            f"  ROOT r = {out} conditional(k, t, t), branch_computations={{branch, branch}}\n}}\n")


def called_twice(lhs: str, rhs: str, out: str, attrs: str) -> str:
    """A convolution in a computation called from two sites (XLA CPU inlines it anyway)."""
    return (f"HloModule c\nf {{\n  x = {lhs} parameter(0)\n  w = {rhs} parameter(1)\n"
            f"  ROOT c = {out} convolution(x, w), {attrs}\n}}\n"
            f"ENTRY e {{\n  x = {lhs} parameter(0)\n  w = {rhs} parameter(1)\n"
            f"  a = {out} call(x, w), to_apply=f\n  b = {out} call(x, w), to_apply=f\n"
            f"  ROOT t = ({out}, {out}) tuple(a, b)\n}}\n")


# name -> (module, whether XLA CPU multiplies the zeros of holes and padding: the branch
# of interp/conv_zeros.py the case stands for)
ZERO_CASES = {
    "2-d padding, Eigen patches": (conv(
        "", "f32[2,5,5,3]", "f32[3,3,3,4]", "f32[2,5,5,4]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f")[1], True),
    "2-d lhs_dilate, stride 1: Eigen's transposed conv": (conv(
        "", "f32[2,4,4,3]", "f32[3,3,3,4]", "f32[2,9,9,4]",
        "window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f")[1], False),
    "1-d lhs_dilate, stride 1: run as 2-d, transposed": (conv(
        "", "f32[2,5,3]", "f32[3,3,4]", "f32[2,9,4]",
        "window={size=3 pad=1_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f")[1], False),
    "lhs_dilate and stride 2": (conv(
        "", "f32[2,5,5,3]", "f32[3,3,3,4]", "f32[2,5,5,4]",
        "window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=2x2}, "
        "dim_labels=b01f_01io->b01f")[1], True),
    "lhs_dilate and rhs_dilate": (conv(
        "", "f32[2,5,5,3]", "f32[2,2,3,4]", "f32[2,9,9,4]",
        "window={size=2x2 lhs_dilate=2x2 rhs_dilate=2x2 pad=1_1x1_1}, "
        "dim_labels=b01f_01io->b01f")[1], True),
    "lhs_dilate and feature groups": (conv(
        "", "f32[2,4,4,4]", "f32[3,3,2,4]", "f32[2,7,7,4]",
        "window={size=3x3 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f, "
        "feature_group_count=2")[1], True),
    "3-d lhs_dilate: Eigen volume patches": (conv(
        "", "f32[1,3,3,3,2]", "f32[2,2,2,2,3]", "f32[1,6,6,6,3]",
        "window={size=2x2x2 pad=1_1x1_1x1_1 lhs_dilate=2x2x2}, "
        "dim_labels=b012f_012io->b012f")[1], True),
    "3-d rhs_reversal: the loop emitter": (conv(
        "", "f32[1,4,4,4,2]", "f32[2,2,2,2,3]", "f32[1,5,5,5,3]",
        "window={size=2x2x2 pad=1_1x1_1x1_1 rhs_reversal=1x0x0}, "
        "dim_labels=b012f_012io->b012f")[1], False),
    "4-d: the loop emitter": (conv(
        "", "f32[1,3,3,2,2,2]", "f32[2,2,1,1,2,3]", "f32[1,4,4,2,2,3]",
        "window={size=2x2x1x1 pad=1_1x1_1x0_0x0_0}, dim_labels=b0123f_0123io->b0123f")[1],
     False),
    "f64 padding: the loop emitter": (conv(
        "", "f64[2,5,5,3]", "f64[3,3,3,4]", "f64[2,5,5,4]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f")[1], False),
    "f16 padding: Eigen patches": (conv(
        "", "f16[2,5,5,3]", "f16[3,3,3,4]", "f16[2,5,5,4]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f")[1], True),
    "f64 depthwise padding: the loop emitter, the kernel expanded with zeros across groups": (
        conv("", "f64[2,5,5,4]", "f64[3,3,1,4]", "f64[2,5,5,4]",
             "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
             "feature_group_count=4")[1], False),
    "bf16 padding: normalized to f32, Eigen patches": (conv(
        "", "bf16[2,5,5,3]", "bf16[3,3,3,4]", "bf16[2,5,5,4]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f")[1], True),
    "bf01 / oi01 padding in the entry: canonicalized": (conv(
        "", "f32[2,3,5,5]", "f32[4,3,3,3]", "f32[2,4,5,5]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01")[1], True),
    "bf01 / oi01 padding outside the entry: the loop emitter": (in_branch(
        "f32[2,3,5,5]", "f32[4,3,3,3]", "f32[2,4,5,5]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01"), False),
    "bf01 / oi01 padding in a called computation: inlined, canonicalized": (called_twice(
        "f32[2,3,5,5]", "f32[4,3,3,3]", "f32[2,4,5,5]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01"), True),
    "a kernel of 8 bytes: under-aligned, the loop emitter": (conv(
        "", "f32[1,6,1]", "f32[2,1,1]", "f32[1,7,1]",
        "window={size=2 pad=1_1}, dim_labels=b0f_0io->b0f")[1], False),
    "batch groups of 2, 2-d: a 3-d conv on Eigen": (conv(
        "", "f32[4,5,5,3]", "f32[3,3,3,4]", "f32[2,5,5,4]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, batch_group_count=2")[1],
     True),
    "batch groups of 2, 1-d: a transposed 2-d conv": (conv(
        "", "f32[4,6,3]", "f32[3,3,4]", "f32[2,6,4]",
        "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, batch_group_count=2")[1], False),
    "batch groups of 3, 1-d: stride 2, Eigen patches": (conv(
        "", "f32[6,6,3]", "f32[3,3,6]", "f32[2,6,6]",
        "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, batch_group_count=3")[1], True),
    "batch groups = batch = output features: all pairs of groups, the cross ones masked": (
        conv("", "f32[2,5,5,3]", "f32[3,3,3,2]", "f32[1,5,5,2]",
             "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
             "batch_group_count=2")[1], True),
}


def with_specials(module, seed: int) -> list[np.ndarray]:
    """Standard normal values, the kernel's first element +inf and last -inf, one input
    element NaN: every zero that meets a kernel value inf gives NaN."""
    inputs = case_inputs(module, seed)
    x, w = inputs[:2]
    w.reshape(-1)[0] = np.inf
    w.reshape(-1)[-1] = -np.inf
    x.reshape(-1)[x.size // 2] = np.nan
    return inputs


def compare(got: np.ndarray, want: np.ndarray, label: str) -> None:
    """Equal to a tolerance, NaN where the other has NaN, infinities equal."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    loose = "bf16" in label or "f16" in label
    np.testing.assert_allclose(got, want, rtol=8e-3 if loose else 1e-5,
                               atol=1e-2 if loose else 1e-5, err_msg=label)


def test_holes_and_padding_meet_inf_as_on_xla(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each branch of XLA CPU's choice with inf / NaN operands; the opposite choice must
    differ from XLA on each case (so each case tells the branches apart)."""
    import tilecc.hlo.interp.conv as conv_module
    runs, jobs = [], []
    for name, (text, _) in ZERO_CASES.items():
        module = parse_module(text, name)
        inputs = with_specials(module, 0)
        jobs.append(XlaJob("run", text, inputs, REPLICAS))
        runs.append((name, module, inputs))
    rule = conv_module.multiplies_zeros
    for (name, module, inputs), want in zip(runs, run_many_on_xla(jobs)):
        if isinstance(want, Exception):
            raise want
        monkeypatch.setattr(conv_module, "multiplies_zeros", rule)
        got = evaluate_module(module, inputs, REPLICAS)
        multiplies = ZERO_CASES[name][1]
        for g, w in zip(got, want):
            compare(g, w, name)
        seen: list[bool] = []
        monkeypatch.setattr(conv_module, "multiplies_zeros",
                            lambda g: seen.append(rule(g)) or not rule(g))
        flipped = evaluate_module(module, inputs, REPLICAS)
        assert seen and all(s == multiplies for s in seen), name
        with pytest.raises(AssertionError):
            for g, w in zip(flipped, want):
                compare(g, w, name)
