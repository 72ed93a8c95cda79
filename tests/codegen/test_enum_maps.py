"""The spec 003 crosswalk tables: every KLR member mapped or rejected; range checks."""

from __future__ import annotations

import pytest

from tilecc.bir.enums import (ActivationFunctionType, AluOpType, AxisListType, BirDtype,
                              EngineAccumulationType, EngineType, MemoryKind)
from tilecc.codegen import enum_maps as m
from tilecc.errors import CodegenError
from tilecc.klr import ast as k

# spec 003, codegenAluOp, "byte-exact table dword_1DE9760" (idx = klrAluOp - 1)
SPEC_ALU = """abs(1)→29 add(2)→4 ashl(3)→2 ashr(4)→3 average(5)→24 and(6)→10 bnot(7)→1
or(8)→11 xor(9)→12 bypass(10)→0 divide(11)→7 is_eq(12)→18 is_ge(13)→21 is_gt(14)→20
is_le(15)→23 is_lt(16)→22 land(17)→13 lor(18)→14 lshl(19)→16 lshr(20)→17 lxor(21)→15
max(22)→8 min(23)→9 mod(24)→27 mult(25)→6 neq(26)→19 pow(27)→26 rsqrt(28)→28
subtract(29)→5"""


def test_alu_op_table_matches_spec_text() -> None:
    entries = [e.replace("(", " ").replace(")→", " ").split() for e in SPEC_ALU.split()]
    assert len(entries) == 29
    for _, klr_index, bir in entries:
        assert m.codegen_alu_op(k.AluOp(int(klr_index) - 1)) == AluOpType(int(bir))


def test_every_alu_op_maps_to_its_namesake() -> None:
    for op in k.AluOp:
        assert m.codegen_alu_op(op).name == op.name
    unreachable = set(AluOpType) - {m.codegen_alu_op(op) for op in k.AluOp}
    assert unreachable == {AluOpType.elemwise_mul, AluOpType.abs_max, AluOpType.abs_min,
                           AluOpType.mod_int}


@pytest.mark.parametrize("fn", [m.codegen_alu_op, m.codegen_engine, m.codegen_accum_cmd,
                                m.codegen_tensor_sub_dim])
@pytest.mark.parametrize("bad", [-1, 99, True])
def test_range_checks_raise(fn, bad) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CodegenError):
        fn(bad)


def test_engine_table() -> None:
    expected = {k.Engine.unassigned: EngineType.Unassigned, k.Engine.act: EngineType.Activation,
                k.Engine.dma: EngineType.DMA, k.Engine.dve: EngineType.DVE,
                k.Engine.pe: EngineType.PE, k.Engine.pool: EngineType.Pool,
                k.Engine.sp: EngineType.SP}
    assert {e: m.codegen_engine(e) for e in k.Engine} == expected
    assert m.codegen_engine(len(k.Engine) - 1) == EngineType.SP
    with pytest.raises(CodegenError):
        m.codegen_engine(len(k.Engine))


def test_accum_cmd_table() -> None:
    E = EngineAccumulationType
    assert [m.codegen_accum_cmd(c) for c in k.AccumCmd] == [
        E.Idle, E.Zero, E.AddAccumulate, E.ZeroAccumulate, E.LoadAccumulate]
    with pytest.raises(CodegenError, match="Unrecognized accumulation cmd"):
        m.codegen_accum_cmd(5)


def test_activation_func_table() -> None:
    got = [m.codegen_activation_func(f) for f in k.ActivationFunc]
    assert len(got) == 25 and len(set(got)) == 25
    assert m.codegen_activation_func(k.ActivationFunc.reciprocal) == 25
    names = {f.name: m.codegen_activation_func(f).name for f in k.ActivationFunc}
    assert names["log"] == "Ln" and names["erf_dx"] == "Derivative_Erf"
    assert names["silu_dx"] == "Derivative_silu" and names["copy"] == "Copy"
    assert names["gelu_apprx_sigmoid_dx"] == "Derivative_Gelu_apprx_sigmoid"
    unreachable = set(ActivationFunctionType) - set(got)
    assert {u.name for u in unreachable} == {"Identity", "Lrelu", "Prelu",
                                             "Abs_reciprocal_sqrt", "Is_finite", "Unknown"}
    # out of range: the spec's soft default, not an error
    assert m.codegen_activation_func(25) == ActivationFunctionType.Unknown == 30
    assert m.codegen_activation_func(-1) == ActivationFunctionType.Unknown


def test_bir_enum_sizes() -> None:
    assert len(AluOpType) == 33 and len(ActivationFunctionType) == 31
    assert ActivationFunctionType.Reciprocal == 25 and ActivationFunctionType.Unknown == 30
    assert [a.value for a in AxisListType] == list(range(6)) and AxisListType.C == 5


def test_tensor_sub_dim_never_above_3() -> None:
    assert [m.codegen_tensor_sub_dim(d) for d in k.TensorSubDim] == [
        AxisListType.X, AxisListType.XY, AxisListType.XYZ, AxisListType.XYZW]
    with pytest.raises(CodegenError):
        m.codegen_tensor_sub_dim(4)


def test_reverse_ops() -> None:
    R = k.TensorScalarReverseOps
    assert [m.set_tensor_scalar_reverse_ops(r) for r in R] == [
        (False, False), (True, False), (False, True), (True, True)]
    with pytest.raises(CodegenError):
        m.set_tensor_scalar_reverse_ops(4)  # type: ignore[arg-type]


def test_memory_and_dtype_crosswalks() -> None:
    for mem in k.Memory:
        if mem in m.REJECTED_MEMORIES:
            with pytest.raises(CodegenError):
                m.codegen_memory(mem)
        else:
            assert m.codegen_memory(mem) in MemoryKind
    assert m.codegen_memory(k.Memory.psum) == MemoryKind.PSUM
    assert [m.codegen_dtype(d).name for d in k.Dtype] == [d.name for d in k.Dtype]
    assert m.codegen_dtype(k.Dtype.int64) == BirDtype.int64
    # BIR's dtype enum is a class of its own, built from KLR's members
    assert BirDtype is not k.Dtype
    assert all(type(m.codegen_dtype(d)) is BirDtype for d in k.Dtype)
