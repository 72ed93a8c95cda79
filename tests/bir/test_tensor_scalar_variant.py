"""The one classifier of TensorScalarPtr's variants, and its use by the verifier, the
simulator and the BIR JSON reader: each variant recognised, each bad combination refused."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tilecc.bir import inst as b
from tilecc.bir.enums import BirDtype, EngineAccumulationType as Acc, EngineType, MemoryKind
from tilecc.bir.json import read_program_json, write_program_json
from tilecc.bir.tensor_scalar_variant import (TensorScalarVariant as V, TensorScalarVariantError,
                                              tensor_scalar_variant)
from tilecc.bir.verifier import verify_program
from tilecc.errors import ParseError, SimError, VerifyError
from tilecc.sim.execute import simulate

F32 = BirDtype.float32


def ap(name: str, elems: int = 8) -> b.AccessPattern:
    return b.AccessPattern(name, F32, 0, ((elems, 4), (1, elems)))


def ts(**kw: object) -> b.InstTensorScalarPtr:
    fields: dict[str, object] = dict(name="TS", engine=EngineType.DVE,
                                     ins=[ap("x"), b.Immediate(F32, 2.0)], outs=[ap("y")])
    fields.update(kw)
    return b.InstTensorScalarPtr(**fields)  # type: ignore[arg-type]


PLAIN = ts()
REDUCE = ts(outs=[ap("y"), ap("r", 1)], acc=Acc.ZeroAccumulate)
STT = ts(ins=[ap("x"), b.Immediate(F32, 2.0), ap("z")], is_scalar_tensor_tensor=True)
SCAN = dataclasses.replace(STT, is_tensor_tensor_scan=True, acc=Acc.AddAccumulate)


@pytest.mark.parametrize("inst, variant", [
    (PLAIN, V.PLAIN), (REDUCE, V.REDUCE), (STT, V.SCALAR_TENSOR_TENSOR),
    (SCAN, V.TENSOR_TENSOR_SCAN),
    (dataclasses.replace(REDUCE, negate_second_output=True), V.REDUCE),
])
def test_each_variant(inst: b.InstTensorScalarPtr, variant: V) -> None:
    assert tensor_scalar_variant(inst) is variant


REFUSED = [
    (dataclasses.replace(STT, is_scalar_tensor_tensor=False, is_tensor_tensor_scan=True),
     "is_tensor_tensor_scan needs is_scalar_tensor_tensor"),
    (dataclasses.replace(REDUCE, outs=[ap("y")]), "found 1 output(s) and acc ZeroAccumulate"),
    (dataclasses.replace(REDUCE, acc=Acc.Idle), "found 2 output(s) and acc Idle"),
    (dataclasses.replace(PLAIN, acc=Acc.AddAccumulate), "plain tensor_scalar has one output "
                                                        "and acc Idle, found 1 output(s) and "
                                                        "acc AddAccumulate"),
    (dataclasses.replace(STT, outs=[ap("y"), ap("r", 1)]), "scalar_tensor_tensor writes 1 output"),
    (dataclasses.replace(PLAIN, negate_second_output=True),
     "negate_second_output needs a second output: tensor_scalar has one"),
    (dataclasses.replace(SCAN, negate_second_output=True), "tensor_tensor_scan has one"),
]


@pytest.mark.parametrize("inst, message", REFUSED)
def test_refusals(inst: b.InstTensorScalarPtr, message: str) -> None:
    with pytest.raises(TensorScalarVariantError) as info:
        tensor_scalar_variant(inst)
    assert message in str(info.value)


def program(inst: b.Inst) -> b.Program:
    locs = [b.MemoryLocation(n, MemoryKind.SB, F32, 4, e * 4)
            for n, e in (("x", 8), ("y", 8), ("z", 8), ("r", 1))]
    return b.Program("k", locs, [], [], [inst])


@pytest.mark.parametrize("inst", [PLAIN, REDUCE, STT, SCAN])
def test_valid_variants_verify_and_round_trip(inst: b.InstTensorScalarPtr) -> None:
    verify_program(program(inst))
    assert read_program_json(write_program_json(program(inst))) == program(inst)


def test_verifier_simulator_and_reader_refuse_through_the_classifier() -> None:
    bad = dataclasses.replace(REDUCE, acc=Acc.Idle)
    with pytest.raises(VerifyError, match=r"instruction 0 'TS' \(TensorScalarPtr\): a "
                                          r"tensor_scalar_reduce has two outputs"):
        verify_program(program(bad))
    with pytest.raises(SimError, match="TensorScalarPtr: a tensor_scalar_reduce has two outputs"):
        simulate(program(bad), {})
    doc = json.loads(write_program_json(program(REDUCE)))
    doc["instructions"][0]["acc"] = "Idle"
    with pytest.raises(ParseError) as info:
        read_program_json(json.dumps(doc), "k.bir.json")
    assert str(info.value).startswith("k.bir.json:instructions[0]: error: TensorScalarPtr: a "
                                      "tensor_scalar_reduce has two outputs")
