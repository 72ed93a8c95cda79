"""The in-place stages (operands.write_stages, the activation's pre-stage) give the values
of the two-pass form: also when an operand read after the first stage lies in the
destination, and for the signed zero the bias add makes."""

from __future__ import annotations

import numpy as np
import pytest

from bir_builders import ProgramBuilder, imm
from tilecc.bir.enums import (ActivationFunctionType as Act, AluOpType as Op, EngineType)
from tilecc.bir.inst import InstActivation, InstTensorScalarPtr

RNG = np.random.default_rng(7)
DVE, ACT = EngineType.DVE, EngineType.Activation


def _program(second: str) -> ProgramBuilder:
    """y = (x * 2) + s1, s1 = column 0 of y itself ("dst") or of another tile ("other")."""
    pb = ProgramBuilder()
    pb.arg_in("a", (8, 10))
    pb.arg_in("b", (8, 10))
    pb.tile("x", (8, 10))
    pb.tile("y", (8, 10))
    pb.tile("c", (8, 10))
    pb.arg_out("out", (8, 10))
    pb.load("x", "a")
    pb.load("y", "b")
    pb.load("c", "b")
    column = pb.ap("y" if second == "dst" else "c", [(1, 1)])
    pb.add(InstTensorScalarPtr("ts", DVE, [pb.ap("x"), imm(2.0), column], [pb.ap("y")],
                               op0=Op.mult, op1=Op.add, is_tensor_scalar_addr=True))
    pb.store("out", "y")
    return pb


@pytest.mark.parametrize("second", ["dst", "other"])
def test_second_scalar_read_before_the_destination_is_written(second):
    a = RNG.standard_normal((8, 10)).astype(np.float32)
    b = RNG.standard_normal((8, 10)).astype(np.float32)
    got = _program(second).run(a=a, b=b)["out"]
    np.testing.assert_array_equal(got, a * np.float32(2) + b[:, :1])


@pytest.mark.parametrize("reverse", [False, True])
def test_reversed_stages_in_place(reverse):
    pb = ProgramBuilder()
    pb.arg_in("a", (4, 6))
    pb.tile("x", (4, 6))
    pb.tile("y", (4, 6))
    pb.arg_out("out", (4, 6))
    pb.load("x", "a")
    pb.add(InstTensorScalarPtr("ts", DVE, [pb.ap("x"), imm(1.0), imm(8.0)], [pb.ap("y")],
                               op0=Op.subtract, reverse0=reverse, op1=Op.divide,
                               reverse1=reverse))
    pb.store("out", "y")
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    one, eight = np.float32(1), np.float32(8)
    want = eight / (one - a) if reverse else (a - one) / eight
    np.testing.assert_array_equal(pb.run(a=a)["out"], want)


def test_activation_bias_in_the_destination_and_signed_zero():
    """out = tanh(x * 0.5 + bias) with bias = column 0 of the destination, read after the
    pre-stage would have overwritten it in place; -0.0 * 0.5 + 0.0 is +0.0."""
    pb = ProgramBuilder()
    pb.arg_in("a", (8, 4))
    pb.arg_in("b", (8, 4))
    pb.tile("x", (8, 4))
    pb.tile("y", (8, 4))
    pb.arg_out("out", (8, 4))
    pb.load("x", "a")
    pb.load("y", "b")
    pb.add(InstActivation("act", ACT, [pb.ap("x"), pb.ap("y", [(1, 1)])], [pb.ap("y")],
                          scale=0.5, func=Act.Tanh))
    pb.store("out", "y")
    a = RNG.standard_normal((8, 4)).astype(np.float32)
    a[0, :] = -0.0
    b = RNG.standard_normal((8, 4)).astype(np.float32)
    b[0, 0] = 0.0
    got = pb.run(a=a, b=b)["out"]
    want = np.tanh(a * np.float32(0.5) + b[:, :1])
    np.testing.assert_array_equal(got, want)
    assert not np.signbit(got[0]).any()   # +0.0, not the -0.0 of x * scale alone


def _biased_tanh(bias: np.ndarray, a: np.ndarray) -> np.ndarray:
    pb = ProgramBuilder()
    pb.arg_in("a", a.shape)
    pb.arg_in("b", bias.shape)
    pb.tile("x", a.shape)
    pb.tile("c", bias.shape)
    pb.arg_out("out", a.shape)
    pb.load("x", "a")
    pb.load("c", "b")
    pb.add(InstActivation("act", ACT, [pb.ap("x"), pb.ap("c")], [pb.ap("x")],
                          scale=0.5, func=Act.Tanh))
    pb.store("out", "x")
    return pb.run(a=a, b=bias)["out"]


@pytest.mark.parametrize("column", [[0.0] * 8, [0.75] * 8, [np.nan] * 8,
                                    [0.0] * 7 + [-0.0], [0.0] * 7 + [1.5]])
def test_activation_bias_one_value_or_several_on_a_wide_tile(column):
    """A bias column with one value in every partition (bit for bit) is added as a scalar:
    the same values as the column, signed zeros and NaN included; -0.0 beside +0.0 is
    two values."""
    a = RNG.standard_normal((8, 512)).astype(np.float32)
    a[:, :3] = -0.0
    bias = np.array(column, np.float32).reshape(8, 1)
    got = _biased_tanh(bias, a)
    want = np.tanh(a * np.float32(0.5) + bias)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
