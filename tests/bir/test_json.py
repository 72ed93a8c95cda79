"""BIR JSON: read(write(p)) == p for every instruction class; malformed documents."""

from __future__ import annotations

import json
import math

import pytest

from tilecc.bir import inst as b
from tilecc.bir import inst_random as r
from tilecc.bir import inst_vector as v
from tilecc.bir.enums import (ActivationFunctionType, AluOpType, AxisListType, BirDtype,
                              EngineAccumulationType, EngineType, MemoryKind, TSCMode)
from tilecc.bir.inst_tensor_engine import (InstDmaTranspose, InstIndirectDMACopy, InstMatMult,
                                           InstTensorCopyDynamic, InstTranspose)
from tilecc.bir.json import program_to_doc, read_program_json, write_program_json
from tilecc.errors import ParseError

F32 = BirDtype.float32
AP = b.AccessPattern("x", F32, 3, ((64, 2), (-1, 4), (0, 2)))


def vector_insts() -> list[b.Inst]:
    """One of each Vector / GpSimd-family and random-number instruction (bir.inst_vector,
    bir.inst_random), fields not default."""
    i32 = BirDtype.int32
    return [
        v.InstBatchNormStats("BS", EngineType.DVE, [AP], [AP]),
        v.InstBatchNormAggregate("BA", EngineType.DVE, [AP], [AP]),
        v.InstSelectReduce("SR", EngineType.DVE, [AP, AP, b.Immediate(F32, -1.5)], [AP, AP],
                           acc=EngineAccumulationType.ZeroAccumulate, reverse_pred=True),
        v.InstCopyPredicated("CP", EngineType.DVE, [AP, AP], [AP], reverse_pred=True),
        v.InstAffineSelect("AS", EngineType.Pool, [AP, b.Immediate(F32, 2.0)], [AP], offset=-4,
                           pattern=((1, 2), (-3, 4)), channel_multiplier=-1, cmp_op=AluOpType.is_gt),
        v.InstRangeSelect("RS", EngineType.DVE, [AP, AP, AP, b.Immediate(F32, 1.0),
                                                 b.Immediate(F32, -math.inf)], [AP],
                          acc=EngineAccumulationType.AddAccumulate, comp_op0=AluOpType.is_equal),
        v.InstMax8("M8", EngineType.DVE, [AP], [AP]),
        v.InstFindIndex8("F8", EngineType.DVE, [AP, AP], [AP]),
        v.InstMatchReplace8("R8", EngineType.DVE, [AP, AP, b.Immediate(F32, 0.0)], [AP, AP]),
        v.InstShuffle("SH", EngineType.DVE, [AP] + [b.Immediate(i32, 255)] * 32, [AP]),
        v.InstSequenceBounds("SB", EngineType.Pool, [AP], [AP]),
        v.InstNGather("NG", EngineType.Pool, [AP, AP], [AP]),
        v.InstLocalGather("LG", EngineType.Pool, [AP, AP], [AP], num_elem_per_idx=4,
                          num_valid_indices=64),
        v.InstNonzeroWithCount("NZ", EngineType.Pool, [AP], [AP], index_offset=16, padding_val=-7),
        r.InstRng("RG", EngineType.Pool, [], [AP]),
        r.InstRand2("R2", EngineType.DVE, [b.Immediate(F32, 0.0), AP], [AP]),
        r.InstRandGetState("GS", EngineType.DVE, [], [AP]),
        r.InstRandSetState("SS", EngineType.Pool, [AP], []),
        r.InstSetRngSeed("SD", EngineType.DVE, [AP], []),
        r.InstDropout("DO", EngineType.DVE, [AP, b.Immediate(F32, 0.25)], [AP], keep_rate=True),
        r.InstDevicePrint("DP", EngineType.Unassigned, [AP], [], prefix='say "hi"\n',
                          location="k.py:3", to_stderr=False),
    ]


def every_inst() -> b.Program:
    insts: list[b.Inst] = [
        b.InstActivation("A", EngineType.Activation, [AP, b.Immediate(F32, -math.inf)], [AP],
                         scale=None, func=ActivationFunctionType.Unknown,
                         acc=EngineAccumulationType.LoadAccumulate, is_activate2=True,
                         op0=AluOpType.mod_int, reverse1=True, reduce_op=AluOpType.max),
        b.InstReadActivationAccumulator("R", EngineType.Activation, [AP], []),
        b.InstReciprocal("Rc", EngineType.Unassigned, [AP], [AP]),
        b.InstTensorReduce("TR", EngineType.Pool, [AP], [AP], op=AluOpType.average,
                           axis=AxisListType.C, negate=True),
        b.InstTensorScalarPtr("TS", EngineType.DVE, [AP, b.Immediate(BirDtype.int32, -7)], [AP, AP],
                              acc=EngineAccumulationType.ZeroAccumulate, negate_second_output=True),
        b.InstTensorScalarCache("TC", EngineType.DVE, [AP], [AP], mode=TSCMode.TensorScan),
        b.InstTensorTensor("TT", EngineType.SP, [AP, AP], [AP], op=AluOpType.pow),
        b.InstDveReadAccumulator("D", EngineType.DVE, [AP], []),
        b.InstExponential("E", EngineType.DVE, [AP], [AP],
                          reduce_cmd=EngineAccumulationType.AddAccumulate),
        b.InstMemset("M", EngineType.Pool, [b.Immediate(F32, math.nan)], [AP]),
        b.InstDMACopy("C", EngineType.DMA, [AP], [AP], compute_op=AluOpType.add),
        b.InstTensorCopy("T", EngineType.ALL, [AP], [AP]),
        b.InstIota("I", EngineType.Pool, [], [AP], offset=-3, pattern=((1, 4), (-2, 2)),
                   channel_multiplier=5),
        InstMatMult("MM", EngineType.PE, [AP, AP], [AP], accumulate=True, double_row=True,
                    tile_row=64, tile_rows=64, tile_cols=32, moving_onezero=True),
        InstTranspose("TP", EngineType.DVE, [AP], [AP]),
        InstDmaTranspose("DT", EngineType.DMA, [AP], [AP], permutation=((0, 3), (1, 2), (2, 1), (3, 0))),
        InstIndirectDMACopy("IG", EngineType.DMA, [AP, AP], [AP], scatter=True, oob_skip=True,
                            accumulate=True),
        InstTensorCopyDynamic("CD", EngineType.Pool, [AP, AP], [AP], stride=-4, dynamic_src=False),
        b.InstTensorScalarPtr("TSS", EngineType.DVE, [AP, AP, AP], [AP], is_tensor_scalar_addr=True,
                              is_tensor_tensor_scan=True, is_scalar_tensor_tensor=True),
    ]
    insts += vector_insts()
    assert {type(i) for i in insts} == set(b.INST_CLASSES.values())
    return b.Program("k", [b.MemoryLocation("x", MemoryKind.PSUM, F32, 2, 256)],
                     [b.IOTensor("x", F32, (2, 64))], [b.IOTensor("x", F32, (2, 64))], insts)


def test_round_trip_every_instruction() -> None:
    p = every_inst()
    for pretty in (False, True):
        text = write_program_json(p, pretty=pretty)
        q = read_program_json(text)
        assert write_program_json(q, pretty=pretty) == text
        a, m = q.instructions[0], q.instructions[9]
        assert isinstance(a, b.InstActivation)
        assert a.ins[1].value == -math.inf  # type: ignore[union-attr]
        assert math.isnan(m.ins[0].value)  # type: ignore[union-attr]
    # NaN != NaN, so compare everything but the memset's value directly
    p.instructions[9] = q.instructions[9] = b.InstMemset("M", EngineType.Pool, [], [AP])
    assert q == p


def test_enums_are_written_by_name() -> None:
    doc = json.loads(write_program_json(every_inst()))
    first = doc["instructions"][0]
    assert (first["opcode"], first["func"], first["acc"], first["engine"]) == (
        "Activation", "Unknown", "LoadAccumulate", "Activation")
    assert doc["instructions"][3]["axis"] == "C"
    assert doc["memory_locations"][0]["kind"] == "PSUM"


@pytest.mark.parametrize("edit, field, message", [
    (lambda d: d["instructions"][6].update(op="mul"), "instructions[6].op",
     "unknown AluOpType 'mul'"),
    (lambda d: d["instructions"][0].update(opcode="Conv"), "instructions[0].opcode",
     "unknown opcode 'Conv'"),
    (lambda d: d["instructions"][2].update(bogus=1), "instructions[2].bogus", "unknown key"),
    (lambda d: d["instructions"][2]["ins"][0].update(ap=[[1]]), "instructions[2].ins[0].ap[0]",
     "expected [step, num]"),
    (lambda d: d["instructions"][3].pop("negate"), "instructions[3]", "missing field 'negate'"),
    (lambda d: d["memory_locations"][0].update(partitions=-1),
     "memory_locations[0].partitions", "natural number"),
])
def test_malformed(edit, field: str, message: str) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(write_program_json(every_inst()))
    edit(doc)
    with pytest.raises(ParseError) as info:
        read_program_json(json.dumps(doc), "p.bir.json")
    assert info.value.field == field and message in info.value.message
    assert str(info.value).startswith(f"p.bir.json:{field}: error:")


def pretty_reference(p: b.Program) -> str:
    """The pretty form by its definition: one json.dumps(item) per line."""
    doc = program_to_doc(p)
    parts = [f' "name": {json.dumps(doc["name"])}']
    for key in ("memory_locations", "inputs", "outputs", "instructions"):
        items = ",\n".join("  " + json.dumps(item) for item in doc[key])
        parts.append(f' "{key}": [\n{items}\n ]' if items else f' "{key}": []')
    return "{\n" + ",\n".join(parts) + "\n}"


def test_texts_are_json_dumps_of_the_document() -> None:
    """The directly formatted compact and pretty texts equal dumping the dict form, byte for
    byte (odd names, subnormal / signed-zero / infinite floats, shared arguments)."""
    p = every_inst()
    p.instructions.append(b.InstActivation(
        'q"\\é\n', EngineType.Activation, [AP, AP, b.Immediate(F32, 1e-45)], [AP],
        scale=-0.0, alpha=math.inf))
    p.instructions.append(b.InstTensorTensor("TT2", EngineType.SP, [AP, AP], [AP]))
    expected = json.dumps(program_to_doc(p), separators=(",", ":"))
    assert write_program_json(p) == expected
    assert write_program_json(p, pretty=True) == pretty_reference(p)
    empty = b.Program("e")
    assert write_program_json(empty) == json.dumps(program_to_doc(empty), separators=(",", ":"))
    assert write_program_json(empty, pretty=True) == pretty_reference(empty)
