"""KLR JSON of the Tensor Engine / DMA family: every operator and field round-trips, KLR
HEAD's spellings (perfMode "None", TransposeOps, DmaBounds), defaults of missing keys, and
located errors (an unknown enum member, a dynamic birPattern offset)."""

from __future__ import annotations

import json

import pytest

from tilecc.errors import ParseError
from tilecc.klr import ast as k
from tilecc.klr.read import read_kernel_json, write_kernel_json


def kernel() -> k.Kernel:
    a = k.make_tensor("a", k.Dtype.bfloat16, (128, 64), k.Memory.sbuf)
    b = k.make_tensor("b", k.Dtype.float8e4, (128, 2, 8), k.Memory.sbuf)
    p = k.make_tensor("p", k.Dtype.float32, (64, 512), k.Memory.psum)
    h = k.make_tensor("h", k.Dtype.bfloat16, (300, 64), k.Memory.hbm)
    i = k.make_tensor("i", k.Dtype.int32, (128, 1), k.Memory.sbuf)
    return k.Kernel("te", [h], [h], [
        k.NcMatMul(p, a, a, is_stationary_one_zero=True, tile_position=(64, 0),
                   tile_size=(64, 128), accumulate=True),
        k.NcMatMul(p, b, b, perf_mode=k.MatmulPerfMode.DoubleRow),
        k.Transpose(a, a, k.Dtype.bfloat16, k.Engine.dve),
        k.DmaTranspose(a, h, k.TransposeOps.XZYW, k.Dtype.bfloat16, 2, k.DmaBounds.error, 3),
        k.IndirectDmaCopy(a, k.AccessPattern(h, 1, (k.APPair(1, 64),)), i, False, k.DmaBounds.skip),
    ])


def test_round_trip_and_klr_spellings():
    text = write_kernel_json(kernel())
    assert read_kernel_json(text) == kernel()
    body = json.loads(text)["body"][0]["body"]
    assert body[1]["oper"]["op"]["ncMatMul"]["perfMode"] == "DoubleRow"
    assert body[0]["oper"]["op"]["ncMatMul"]["perfMode"] == "None"
    assert body[0]["oper"]["op"]["ncMatMul"]["tilePosition"] == [64, 0]
    assert body[3]["oper"]["op"]["dmaTranspose"]["axes"] == "XZYW"
    assert body[4]["oper"]["op"]["indirectDmaCopy"]["oobMode"] == "skip"


def test_a_klr_head_matmul_without_tilecc_fields_reads_with_defaults():
    doc = json.loads(write_kernel_json(kernel()))
    payload = doc["body"][0]["body"][0]["oper"]["op"]["ncMatMul"]
    del payload["accumulate"], payload["tilePosition"]
    op = read_kernel_json(json.dumps(doc)).body[0]
    assert isinstance(op, k.NcMatMul) and op.accumulate is False and op.tile_position == ()


@pytest.mark.parametrize("edit, where, message", [
    (lambda op: op["ncMatMul"].update(perfMode="Fast"), "ncMatMul.perfMode", "unknown MatmulPerfMode 'Fast'"),
    (lambda op: op["ncMatMul"].update(tileSize=[128, -1]), "ncMatMul.tileSize[1]", "natural number"),
])
def test_bad_fields_are_located(edit, where, message):
    doc = json.loads(write_kernel_json(kernel()))
    edit(doc["body"][0]["body"][0]["oper"]["op"])
    with pytest.raises(ParseError, match=message) as info:
        read_kernel_json(json.dumps(doc))
    assert info.value.field.endswith(where)


def test_a_dynamic_bir_pattern_is_refused_not_dropped():
    doc = json.loads(write_kernel_json(kernel()))
    op = doc["body"][0]["body"][2]["oper"]["op"]["transpose"]
    tensor = op["src"]["abstract"]["simple"]
    op["src"] = {"abstract": {"birPattern": {"tensor": tensor, "offset": 0, "pattern": [
        {"step": 64, "num": 128}, {"step": 1, "num": 64}], "vectorOffset": op["dst"]["abstract"]}}}
    with pytest.raises(ParseError, match="dynamic offsets in an access are not supported"):
        read_kernel_json(json.dumps(doc))
