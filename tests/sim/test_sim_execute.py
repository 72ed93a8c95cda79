"""Executors of each BIR opcode on hand-written programs, and the errors they raise."""

from __future__ import annotations

import numpy as np
import pytest

from bir_builders import ProgramBuilder, imm
from tilecc.bir.enums import (ActivationFunctionType as Act, AluOpType as Op, AxisListType,
                              BirDtype, EngineAccumulationType as Acc, EngineType, TSCMode)
from tilecc.bir.inst import (InstActivation, InstDMACopy, InstDveReadAccumulator, InstExponential, InstIota,
                             InstMemset, InstReadActivationAccumulator, InstReciprocal,
                             InstTensorCopy, InstTensorReduce, InstTensorScalarCache,
                             InstTensorScalarPtr, InstTensorTensor, Inst)
from tilecc.errors import SimError
from tilecc.sim.execute import simulate
from tilecc.sim.machine import Machine

DVE, ACT = EngineType.DVE, EngineType.Activation
RNG = np.random.default_rng(0)


def unary_program(shape, inst_factory, out_shape=None, dtype=BirDtype.float32):
    pb = ProgramBuilder()
    pb.arg_in("a", shape, dtype)
    pb.tile("x", shape, dtype)
    pb.tile("y", out_shape or shape)
    pb.arg_out("out", out_shape or shape)
    pb.load("x", "a")
    pb.add(inst_factory(pb))
    pb.store("out", "y")
    return pb


def test_activation_with_scale_bias_and_accumulator_drain():
    pb = ProgramBuilder()
    pb.arg_in("a", (64, 8))
    pb.arg_in("b", (64, 1))
    for name, shape in [("x", (64, 8)), ("bias", (64, 1)), ("y", (64, 8)), ("acc", (64, 1)), ("drain", (64, 1))]:
        pb.tile(name, shape)
    pb.arg_out("out", (64, 8))
    pb.arg_out("sums", (64, 1))
    pb.arg_out("drained", (64, 1))
    pb.load("x", "a")
    pb.load("bias", "b")
    pb.add(InstActivation("act", ACT, [pb.ap("x"), pb.ap("bias"), pb.ap("acc")], [pb.ap("y")],
                          scale=2.0, func=Act.Relu, acc=Acc.ZeroAccumulate))
    pb.add(InstActivation("act2", ACT, [pb.ap("x"), pb.ap("bias")], [pb.ap("y")],
                          scale=2.0, func=Act.Relu, acc=Acc.AddAccumulate))
    pb.add(InstReadActivationAccumulator("drain", ACT, [pb.ap("drain")], []))
    pb.store("out", "y")
    pb.store("sums", "acc")
    pb.store("drained", "drain")
    a = RNG.standard_normal((64, 8)).astype(np.float32)
    b = RNG.standard_normal((64, 1)).astype(np.float32)
    got = pb.run(a=a, b=b)
    want = np.maximum(a * 2 + b, 0)
    np.testing.assert_array_equal(got["out"], want)
    np.testing.assert_allclose(got["sums"][:, 0], want.sum(axis=1), rtol=1e-6)
    np.testing.assert_allclose(got["drained"][:, 0], 2 * want.sum(axis=1), rtol=1e-6)


def test_activate2_pipeline():
    def make(pb):
        return InstActivation("a2", ACT, [pb.ap("x"), imm(3.0), imm(0.5), imm(0.0)], [pb.ap("y")],
                              is_activate2=True, func=Act.Square, op0=Op.subtract, reverse0=True,
                              op1=Op.mult)
    a = RNG.standard_normal((16, 5)).astype(np.float32)
    got = unary_program((16, 5), make).run(a=a)["out"]
    np.testing.assert_array_equal(got, np.square((np.float32(3) - a) * np.float32(0.5)))


def test_exponential_load_accumulate_and_drain():
    pb = ProgramBuilder()
    pb.arg_in("a", (32, 6))
    for name, shape in [("x", (32, 6)), ("y", (32, 6)), ("s", (32, 1))]:
        pb.tile(name, shape)
    pb.arg_out("sums", (32, 1))
    pb.load("x", "a")
    pb.add(InstExponential("exp", DVE, [imm(1.0), imm(10.0), pb.ap("x")], [pb.ap("y")],
                           reduce_cmd=Acc.LoadAccumulate))
    pb.add(InstDveReadAccumulator("rd", DVE, [pb.ap("s")], []))
    pb.store("sums", "s")
    a = RNG.standard_normal((32, 6)).astype(np.float32)
    got = pb.run(a=a)["sums"][:, 0]
    np.testing.assert_allclose(got, 10 + np.exp(a.astype(np.float64) - 1).sum(axis=1), rtol=1e-6)


@pytest.mark.parametrize("axis, want_shape, fold", [
    (AxisListType.X, (8, 3, 4), lambda a: a.sum(axis=3)),
    (AxisListType.XY, (8, 3), lambda a: a.sum(axis=(2, 3))),
    (AxisListType.XYZ, (8, 1), lambda a: a.sum(axis=(1, 2, 3)).reshape(8, 1)),
    (AxisListType.C, (1, 60), lambda a: a.sum(axis=0).reshape(1, 60)),
])
def test_tensor_reduce_axes(axis, want_shape, fold):
    def make(pb):
        src = pb.ap("x", [(20, 3), (5, 4), (1, 5)])
        return InstTensorReduce("red", DVE, [src], [pb.ap("y")], op=Op.add, axis=axis)
    a = RNG.standard_normal((8, 60)).astype(np.float32)
    got = unary_program((8, 60), make, out_shape=want_shape).run(a=a)["out"]
    np.testing.assert_allclose(got, fold(a.reshape(8, 3, 4, 5)).reshape(want_shape), rtol=1e-5, atol=1e-6)


def test_tensor_reduce_negate_and_errors():
    def make(pb):
        return InstTensorReduce("red", DVE, [pb.ap("x")], [pb.ap("y")], op=Op.max, negate=True)
    a = RNG.standard_normal((4, 9)).astype(np.float32)
    np.testing.assert_array_equal(unary_program((4, 9), make, out_shape=(4, 1)).run(a=a)["out"][:, 0],
                                  -a.max(axis=1))
    with pytest.raises(SimError, match="red .*axis C.* cannot negate"):
        unary_program((4, 9), lambda pb: InstTensorReduce("red", DVE, [pb.ap("x")], [pb.ap("y")],
                                                           axis=AxisListType.C, negate=True),
                      out_shape=(1, 9)).run(a=a)
    with pytest.raises(SimError, match="axis XY folds 2 free dims; the input has 1"):
        unary_program((4, 9), lambda pb: InstTensorReduce("red", DVE, [pb.ap("x")], [pb.ap("y")],
                                                           axis=AxisListType.XY),
                      out_shape=(4, 1)).run(a=a)


@pytest.mark.parametrize("negate", [False, True])
def test_tensor_scalar_reduce_two_outputs(negate):
    pb = ProgramBuilder()
    pb.arg_in("a", (8, 10))
    for name, shape in [("x", (8, 10)), ("y", (8, 10)), ("r", (8, 1))]:
        pb.tile(name, shape)
    pb.arg_out("out", (8, 10))
    pb.arg_out("red", (8, 1))
    pb.load("x", "a")
    pb.add(InstTensorScalarPtr("tsr", DVE, [pb.ap("x"), imm(2.0)], [pb.ap("y"), pb.ap("r")],
                               op0=Op.mult, op1=Op.max, acc=Acc.ZeroAccumulate,
                               negate_second_output=negate))
    pb.store("out", "y")
    pb.store("red", "r")
    a = RNG.standard_normal((8, 10)).astype(np.float32)
    got = pb.run(a=a)
    np.testing.assert_array_equal(got["out"], a * 2)  # the first output is never negated
    np.testing.assert_array_equal(got["red"][:, 0], (-1 if negate else 1) * (a * 2).max(axis=1))


def test_cumulative_modes():
    def make(acc, op1):
        return lambda pb: InstTensorScalarCache("cum", DVE, [pb.ap("x"), imm(1.0), imm(100.0)], [pb.ap("y")],
                                                op0=Op.mult, op1=op1, mode=TSCMode.Cumulative, acc=acc)
    a = RNG.standard_normal((4, 7)).astype(np.float32)
    got = unary_program((4, 7), make(Acc.LoadAccumulate, Op.add)).run(a=a)["out"]
    np.testing.assert_allclose(got, 100 + np.cumsum(a, axis=1), rtol=1e-6)
    got = unary_program((4, 7), make(Acc.ZeroAccumulate, Op.max)).run(a=a)["out"]
    np.testing.assert_array_equal(got, np.maximum.accumulate(a, axis=1))
    got = unary_program((4, 7), make(Acc.ZeroAccumulate, Op.subtract)).run(a=a)["out"]
    reg, want = np.zeros(4, np.float32), np.empty_like(a)
    for i in range(7):
        reg = a[:, i] - reg
        want[:, i] = reg
    np.testing.assert_array_equal(got, want)
    with pytest.raises(SimError, match="mode Reduce is not implemented"):
        unary_program((4, 7), lambda pb: InstTensorScalarCache("cum", DVE, [pb.ap("x"), imm(1.0)], [pb.ap("y")],
                                                                mode=TSCMode.Reduce)).run(a=a)


def test_tensor_tensor_shapes_must_match():
    def make(pb):
        return InstTensorTensor("tt", DVE, [pb.ap("x"), pb.ap("x", [(1, 4)])], [pb.ap("y")], op=Op.add)
    with pytest.raises(SimError, match=r"tt \(TensorTensor\): tensor_tensor inputs differ in shape: \(4, 6\) vs \(4, 4\)"):
        unary_program((4, 6), make).run(a=np.zeros((4, 6), np.float32))


def test_memset_iota_copy_reciprocal_on_int_and_bf16():
    pb = ProgramBuilder()
    pb.tile("i", (4, 6), BirDtype.int32)
    pb.tile("h", (4, 6), BirDtype.bfloat16)
    pb.tile("r", (4, 6), BirDtype.bfloat16)
    pb.arg_out("iota", (4, 6), BirDtype.int32)
    pb.arg_out("recip", (4, 6), BirDtype.bfloat16)
    pb.add(InstIota("iota", EngineType.Pool, [], [pb.ap("i")], offset=1, pattern=((1, 6),), channel_multiplier=10))
    pb.add(InstTensorCopy("cp", DVE, [pb.ap("i")], [pb.ap("h")]))
    pb.add(InstReciprocal("rc", DVE, [pb.ap("h")], [pb.ap("r")]))
    pb.store("iota", "i")
    pb.store("recip", "r")
    got = pb.run()
    want = 1 + 10 * np.arange(4)[:, None] + np.arange(6)[None, :]
    np.testing.assert_array_equal(got["iota"], want)
    assert got["recip"].dtype.name == "bfloat16"
    np.testing.assert_array_equal(got["recip"].astype(np.float32),
                                  (1 / want.astype(np.float32)).astype(got["recip"].dtype).astype(np.float32))
    pb2 = ProgramBuilder()
    pb2.tile("t", (2, 2), BirDtype.int32)
    pb2.arg_out("out", (2, 2), BirDtype.int32)
    pb2.add(InstMemset("ms", DVE, [imm(3e9)], [pb2.ap("t")]))
    pb2.store("out", "t")
    np.testing.assert_array_equal(pb2.run()["out"], np.int32(2 ** 31 - 1))  # saturated


def test_faults_name_the_instruction():
    class InstBogus(Inst):
        pass

    pb = ProgramBuilder()
    pb.tile("t", (2, 2))
    pb.add(InstBogus("bogus-1", DVE, [], []))
    with pytest.raises(SimError, match=r"bogus-1 \(Bogus\): opcode InstBogus is not implemented"):
        pb.run()
    pb = ProgramBuilder()
    pb.tile("t", (2, 2))
    pb.tile("u", (2, 2))
    pb.add(InstTensorTensor("tt-7", DVE, [pb.ap("t"), pb.ap("t")], [pb.ap("u")], op=Op.add))
    pb.arg_out("out", (2, 2))
    pb.store("out", "u")
    # computing on never-written data is allowed; storing the result to HBM is the error
    with pytest.raises(SimError, match=r"\(DMACopy\): undefined data reaches HBM tensor 'out' "
                                       r"element \[0, 0\]; first read uninitialised at tt-7 "
                                       r"\(TensorTensor\): 't' element \[0, 0\] was never written"):
        pb.run()
    pb = ProgramBuilder()
    pb.tile("t", (2, 2))
    pb.add(InstMemset("ms", DVE, [imm(1.0)], [pb.ap("t")]))
    pb.add(InstTensorTensor("tt-8", DVE, [pb.ap("t")], [pb.ap("t")], op=Op.add))
    with pytest.raises(SimError, match=r"tt-8 \(TensorTensor\): malformed operands"):
        pb.run()


def test_inputs_are_checked():
    pb = ProgramBuilder()
    pb.arg_in("a", (4, 4))
    pb.arg_out("a", (4, 4))
    prog = pb.program()
    ok = np.arange(16, dtype=np.float32).reshape(4, 4)
    np.testing.assert_array_equal(simulate(prog, {"a": ok})["a"], ok)  # in/out: kept
    with pytest.raises(SimError, match="missing input 'a'"):
        simulate(prog, {})
    with pytest.raises(SimError, match=r"unknown input 'b'; the kernel's inputs are \['a'\]"):
        simulate(prog, {"a": ok, "b": ok})
    with pytest.raises(SimError, match=r"input 'a' is float64\[4, 4\]; the kernel expects float32\[4, 4\]"):
        simulate(prog, {"a": ok.astype(np.float64)})
    with pytest.raises(SimError, match=r"input 'a' is float32\[2, 8\]"):
        simulate(prog, {"a": ok.reshape(2, 8)})


def test_a_second_program_on_one_machine_starts_from_power_on_hbm():
    """HBM arrays of the last run are reused: a run that writes half of its output sees
    zeros (uninit ignore) in the other half, not what the previous run left there."""
    from bir_builders import ProgramBuilder

    def half_store(columns: int) -> ProgramBuilder:
        pb = ProgramBuilder()
        pb.arg_in("a", (4, 6))
        pb.tile("x", (4, 6))
        pb.arg_out("out", (4, 6))
        pb.load("x", "a")
        pb.add(InstDMACopy("store", EngineType.DMA, [pb.ap("x", [(1, columns)])],
                           [pb.ap("out", [(1, columns)])]))
        return pb

    m = Machine()
    a = np.arange(24, dtype=np.float32).reshape(4, 6) + 1
    full = simulate(half_store(6).program(), {"a": a}, machine=m)["out"]
    np.testing.assert_array_equal(full, a)
    half = simulate(half_store(3).program(), {"a": a}, machine=m, uninit="ignore")["out"]
    np.testing.assert_array_equal(half[:, :3], a[:, :3])
    np.testing.assert_array_equal(half[:, 3:], 0)


def _copy_through(write_x: bool, columns: int = 6) -> ProgramBuilder:
    """out = x + 1 with x loaded from a (or, write_x False, never written)."""
    pb = ProgramBuilder()
    pb.arg_in("a", (4, columns))
    pb.tile("x", (4, columns))
    pb.tile("y", (4, columns))
    pb.arg_out("out", (4, columns))
    if write_x:
        pb.load("x", "a")
    pb.add(InstTensorScalarPtr("inc", DVE, [pb.ap("x"), imm(1.0)], [pb.ap("y")], op0=Op.add))
    pb.store("out", "y")
    return pb


def test_a_program_run_again_adopts_its_views_and_still_checks_definedness():
    """Runs of one layout share their views (Machine.keep_views): a later program of the
    same layout that reads x unwritten is still refused, and a changed layout (same names,
    wider tiles) gets views of its own."""
    m = Machine()
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    for _ in range(2):
        out = simulate(_copy_through(True).program(), {"a": a}, machine=m)["out"]
        np.testing.assert_array_equal(out, a + np.float32(1))
    with pytest.raises(SimError, match="undefined data reaches HBM tensor 'out'"):
        simulate(_copy_through(False).program(), {"a": a}, machine=m)
    wide = RNG.standard_normal((4, 10)).astype(np.float32)
    out = simulate(_copy_through(True, 10).program(), {"a": wide}, machine=m)["out"]
    np.testing.assert_array_equal(out, wide + np.float32(1))
    out = simulate(_copy_through(True).program(), {"a": a}, machine=m)["out"]
    np.testing.assert_array_equal(out, a + np.float32(1))
