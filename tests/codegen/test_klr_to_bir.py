"""KlirToBirCodegen: golden BIR per leaf variant, and the spec 003 facts checked directly."""

from __future__ import annotations

from pathlib import Path

import pytest

import codegen_golden_kernels as golden
from tilecc.bir import inst as b
from tilecc.bir.enums import (ActivationFunctionType, AluOpType, AxisListType, BirDtype,
                              EngineAccumulationType, EngineType, TSCMode)
from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import (ZERO_BIAS_MEMSET_NAME, ZERO_BIAS_NAME, KlirToBirCodegen,
                                       codegen_kernel)
from tilecc.errors import CodegenError
from tilecc.klr import ast as k
from tilecc.klr.read import read_kernel_file, write_kernel_json

KLR_0012 = Path(__file__).resolve().parents[1] / "fixtures" / "klr0012"
sb, imm = golden.sb, golden.imm


@pytest.mark.parametrize("case", sorted(golden.CASES))
def test_golden(case: str) -> None:
    klr_path = golden.FIXTURES / f"{case}.klr.json"
    kern = golden.CASES[case]()
    assert klr_path.read_text() == write_kernel_json(kern) + "\n"
    assert read_kernel_file(str(klr_path)) == kern
    expected = (golden.FIXTURES / f"{case}.bir.json").read_text()
    assert golden.lower_to_text(kern) == expected


@pytest.mark.parametrize("case", sorted(golden.ERROR_CASES))
def test_golden_error(case: str) -> None:
    klr_path = golden.FIXTURES / f"{case}.klr.json"
    kern = golden.ERROR_CASES[case]()
    assert read_kernel_file(str(klr_path)) == kern
    assert golden.error_text(kern) == (golden.FIXTURES / f"{case}.err").read_text()


def lower(kern: k.Kernel) -> list[b.Inst]:
    """The instructions between the kernel's load and store, verified."""
    program = codegen_kernel(kern)
    verify_program(program)
    return program.instructions[1:-1]


def lower_body(body: list[k.Operator]) -> list[b.Inst]:
    return lower(golden.kernel("t", body))


def test_every_alu_op_through_codegen_alu_op() -> None:
    insts = lower(golden.tensor_tensor_all_ops())
    ops = [i.op for i in insts if isinstance(i, b.InstTensorTensor)]
    assert len(ops) == 29
    assert ops[k.AluOp.subtract] == AluOpType.subtract
    assert ops[k.AluOp.is_ge] == AluOpType.is_ge and ops[k.AluOp.is_ge] == 21
    assert ops[k.AluOp.not_equal] == 19
    assert [op.name for op in ops] == [a.name for a in k.AluOp]
    assert insts[0].name == "y=TensorTensor_abs(x, x)"
    assert all(i.engine == EngineType.DVE and i.acc == EngineAccumulationType.Idle
               for i in insts)


def test_zero_bias_created_once_and_shared() -> None:
    gen = KlirToBirCodegen()
    program = gen.codegen_kernel(golden.activation_all_funcs())
    acts = [i for i in program.instructions if isinstance(i, b.InstActivation)]
    memsets = [i for i in program.instructions if isinstance(i, b.InstMemset)]
    assert [m.name for m in memsets] == [ZERO_BIAS_MEMSET_NAME]
    assert program.instructions.index(memsets[0]) < program.instructions.index(acts[0])
    assert all(a.ins[1].memref == ZERO_BIAS_NAME for a in acts)
    assert [loc.name for loc in program.memory_locations].count(ZERO_BIAS_NAME) == 1
    assert [a.func for a in acts][k.ActivationFunc.reciprocal] == ActivationFunctionType.Reciprocal
    assert [a.func.name for a in acts][:3] == ["Abs", "Arctan", "Copy"]
    assert len({a.func for a in acts}) == 25
    # names come from one counter: NcDmaCopy-0, then the activations 1..25
    assert [a.name for a in acts] == [f"NcActivate-{i}" for i in range(1, 26)]


def test_bias_and_scale_binding() -> None:
    insts = lower(golden.activation_bias_scale())
    acts = [i for i in insts if isinstance(i, b.InstActivation)]
    assert [a.scale for a in acts] == [0.5, 2.0, None, -1.0]
    assert [a.ins[1].memref for a in acts] == [ZERO_BIAS_NAME, "col", "col", ZERO_BIAS_NAME]
    assert acts[2].ins[2].memref == "col" and len(acts[2].ins) == 3
    assert all(a.engine == EngineType.Activation and not a.is_activate2 for a in acts)


def test_activation_accumulate_commands() -> None:
    acts = [i for i in lower(golden.activation_accumulate())
            if isinstance(i, b.InstActivation)]
    E = EngineAccumulationType
    assert [a.acc for a in acts[:5]] == [E.Idle, E.Zero, E.AddAccumulate, E.ZeroAccumulate,
                                         E.LoadAccumulate]
    assert all(a.ins[-1].memref == "acc" for a in acts[:5])
    assert len(acts[5].ins) == 2  # reduce without an accumulator tile binds nothing
    assert acts[6].name.startswith("ActivationReduce-") and acts[6].ins[-1].memref == "acc"


def test_activation_errors() -> None:
    x, y = sb("x"), sb("y")
    with pytest.raises(CodegenError, match="scale for activation must be a float32"):
        lower_body([k.NcActivate(y, x, k.AccumCmd.Idle, k.ActivationFunc.exp, imm(2))])
    with pytest.raises(CodegenError, match="Accumulation is the only supported op"):
        lower_body([k.NcActivate(y, x, k.AccumCmd.Idle, k.ActivationFunc.exp, imm(2.0),
                            reduce_op=k.AluOp.max, reduce_res=sb("c", (128, 1)))])
    with pytest.raises(CodegenError, match=r"body\[1\] \(NcActivate\)"):
        lower_body([k.NcActivate(y, x, k.AccumCmd.Idle, k.ActivationFunc.exp, imm(2))])


def test_activate2_fields() -> None:
    a0, a1 = [i for i in lower(golden.activate2())]
    assert isinstance(a1, b.InstActivation) and a1.is_activate2 and a1.name == "Activate2-2"
    assert (a1.op0, a1.op1, a1.reduce_op) == (AluOpType.subtract, AluOpType.divide,
                                             AluOpType.max)
    assert (a1.reverse0, a1.reverse1, a1.acc) == (True, True, EngineAccumulationType.ZeroAccumulate)
    assert a1.func == ActivationFunctionType.Exp
    assert [getattr(x, "memref", None) for x in a1.ins] == ["x", "col", None, None, "acc"]
    assert isinstance(a0, b.InstActivation) and len(a0.ins) == 4
    assert a0.func == ActivationFunctionType.Relu


def test_exponential_on_dve_with_drain() -> None:
    insts = lower(golden.exponential())
    assert [type(i).__name__ for i in insts] == [
        "InstExponential", "InstExponential", "InstDveReadAccumulator", "InstExponential",
        "InstDveReadAccumulator"]
    assert all(i.engine == EngineType.DVE for i in insts)
    e1, drain = insts[1], insts[2]
    assert isinstance(e1, b.InstExponential)
    assert e1.reduce_cmd == EngineAccumulationType.ZeroAccumulate
    assert [getattr(x, "memref", None) for x in e1.ins] == ["col", None, "x"]
    assert drain.name == "DveReadAccumulator-3" and drain.ins[0].memref == "acc"


def test_reciprocal_header_only() -> None:
    (inst,) = lower(golden.reciprocal())
    assert type(inst) is b.InstReciprocal and inst.OPCODE == 21
    assert inst.ins[0].memref == "x" and inst.outs[0].memref == "y"


def test_tensor_scalar_reverse_and_operands() -> None:
    insts = lower(golden.tensor_scalar_variants())
    assert all(type(i) is b.InstTensorScalarPtr for i in insts)
    ts = [i for i in insts if isinstance(i, b.InstTensorScalarPtr)]
    assert [(i.reverse0, i.reverse1) for i in ts[:4]] == [
        (False, False), (True, False), (False, True), (True, True)]
    assert ts[4].op1 == AluOpType.bypass and len(ts[4].ins) == 2
    assert ts[5].is_tensor_scalar_addr and ts[5].engine == EngineType.Pool
    assert ts[6].is_tensor_scalar_addr and ts[6].engine == EngineType.Activation
    assert not ts[0].is_tensor_scalar_addr and ts[0].engine == EngineType.DVE
    assert ts[7].ins[1] == b.Immediate(BirDtype.int32, 7) and ts[7].engine == EngineType.SP
    with pytest.raises(CodegenError, match="imm1 and op1"):
        lower_body([k.TensorScalar(sb("y"), sb("x"), imm(1.0), k.AluOp.add, imm(2.0))])


def test_tensor_scalar_reduce_collapse() -> None:
    t0, t1 = lower(golden.tensor_scalar_reduce())
    for t in (t0, t1):
        assert type(t) is b.InstTensorScalarPtr and t.acc == EngineAccumulationType.ZeroAccumulate
        assert [o.memref for o in t.outs] == ["y", "acc"]
    assert (t1.op0, t1.op1, t1.reverse0) == (AluOpType.subtract, AluOpType.max, True)
    with pytest.raises(CodegenError, match="ZeroAccumulate only"):
        lower_body([k.TensorScalarReduce(sb("y"), sb("x"), imm(1.0), k.AluOp.add, False, None,
                                    k.AluOp.add, sb("acc", (128, 1)), k.AccumCmd.Accumulate)])


def test_tensor_scalar_cumulative_on_cache_op() -> None:
    insts = lower(golden.tensor_scalar_cumulative())
    assert all(type(i) is b.InstTensorScalarCache and i.OPCODE == 30 for i in insts)
    c0, c1, c2, c3, c4 = [i for i in insts if isinstance(i, b.InstTensorScalarCache)]
    assert [c.acc for c in (c3, c4)] == [EngineAccumulationType.Idle, EngineAccumulationType.Zero]
    assert all(c.mode == TSCMode.Cumulative and c.engine == EngineType.DVE for c in (c0, c1, c2))
    assert [c.acc for c in (c0, c1, c2)] == [EngineAccumulationType.ZeroAccumulate,
                                             EngineAccumulationType.LoadAccumulate,
                                             EngineAccumulationType.AddAccumulate]
    assert (c1.reverse0, c1.reverse1, len(c1.ins)) == (False, True, 3)


def test_scalar_tensor_tensor_operand_order() -> None:
    s0, s1, *by_reverse = lower(golden.scalar_tensor_tensor())
    assert [(s.reverse0, s.reverse1) for s in by_reverse] == [  # type: ignore[attr-defined]
        (False, False), (True, False), (False, True), (True, True)]
    assert isinstance(s1, b.InstTensorScalarPtr) and s1.is_scalar_tensor_tensor
    assert not s1.is_tensor_tensor_scan
    assert [getattr(x, "memref", None) for x in s1.ins] == ["x", "col", "z"]
    assert s0.ins[1] == b.Immediate(BirDtype.float32, 2.0)


def test_tensor_tensor_scan_on_tensor_scalar_ptr() -> None:
    s0, s1, *rest = lower(golden.tensor_tensor_scan())
    assert [(s.reverse0, s.reverse1, s.acc.name) for s in rest] == [  # type: ignore[attr-defined]
        (r0, r1, acc) for r0, r1 in ((False, False), (True, False), (False, True), (True, True))
        for acc in ("Idle", "AddAccumulate")]
    assert isinstance(s1, b.InstTensorScalarPtr) and s1.OPCODE == 29
    assert s1.is_tensor_tensor_scan and s1.is_scalar_tensor_tensor
    assert s1.name == "TensorTensorScan-2" and s1.acc == EngineAccumulationType.ZeroAccumulate
    assert [getattr(x, "memref", None) for x in s1.ins] == ["x", "col", "z"]
    assert (s1.reverse0, s1.reverse1) == (True, True)


def test_reduce_axes() -> None:
    insts = lower(golden.tensor_reduce())
    reduces = [i for i in insts if isinstance(i, b.InstTensorReduce)]
    assert [r.axis for r in reduces] == [AxisListType.X, AxisListType.XY, AxisListType.XYZ,
                                         AxisListType.XYZW, AxisListType.X, AxisListType.C,
                                         AxisListType.C]
    assert [r.negate for r in reduces] == [False, True, False, False, False, False, False]
    assert reduces[-1].name == "TensorPartitionReduce-7" and reduces[-1].op == AluOpType.max


def test_real_klr_0012_files_lower_and_verify() -> None:
    files = sorted(KLR_0012.glob("*.klr.json"))
    assert len(files) == 5
    for path in files:
        program = codegen_kernel(read_kernel_file(str(path)))
        verify_program(program)
    k02 = codegen_kernel(read_kernel_file(str(KLR_0012 / "k02_ts_two_ops.klr.json")))
    ts = [i for i in k02.instructions if isinstance(i, b.InstTensorScalarPtr)]
    assert [(t.op0, t.op1) for t in ts] == [(AluOpType.mult, AluOpType.add),
                                           (AluOpType.max, AluOpType.min)]
    assert [[a.value for a in t.ins[1:]] for t in ts] == [[2.0, 0.5], [0.0, 6.0]]
    assert [t.name for t in k02.inputs] == ["a"] and [t.name for t in k02.outputs] == ["out"]
    k06 = codegen_kernel(read_kernel_file(str(KLR_0012 / "k06_ts_bf16.klr.json")))
    sliced = k06.instructions[3]
    assert isinstance(sliced, b.InstDMACopy)
    assert sliced.ins[0].ap == ((512, 128), (1, 256)) and sliced.outs[0].dtype == BirDtype.float16


def test_unlowerable_memory_and_dtype_override() -> None:
    reg = k.TensorName("r", k.Dtype.float32, k.Shape(1, (1,)),
                       k.Address("r", k.Memory.reg, 1, 4))
    with pytest.raises(CodegenError, match="reg memory"):
        lower_body([k.Reciprocal(sb("y"), reg)])
    with pytest.raises(CodegenError, match="differs from the dtype of dst"):
        lower_body([k.Reciprocal(sb("y"), sb("x"), k.Dtype.bfloat16)])


def test_partition_slice_step_is_a_codegen_error() -> None:
    """An AST built in Python (not read from JSON) with a stepped partition slice
    (body[0] is the kernel's load)."""
    t = k.make_tensor("t", k.Dtype.float32, (8, 16), k.Memory.sbuf)
    body: list[k.Operator] = [k.Reciprocal(t, k.AccessBasic(t, (k.Slice(1, 4, 2),
                                                                 k.Slice(0, 16, 1))))]
    with pytest.raises(CodegenError, match=r"body\[1\] \(Reciprocal\): access of 't': "
                       r"partition slice 1:4:2 has step 2"):
        codegen_kernel(golden.kernel("t", body))
