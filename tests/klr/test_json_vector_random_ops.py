"""KLR JSON of the Vector / GpSimd-family and random-number operators: KLR HEAD's
constructor and field names, read(write(k)) == k for each with non-default fields, and a
malformed field located by its path."""

from __future__ import annotations

import json

import pytest

from tilecc.errors import ParseError
from tilecc.klr import ast as k
from tilecc.klr import ast_random as kr
from tilecc.klr import ast_vector as kv
from tilecc.klr.read import read_kernel_json, write_kernel_json

H = k.make_tensor("h", k.Dtype.float32, (32, 16), k.Memory.hbm)
T = k.make_tensor("t", k.Dtype.float32, (32, 16), k.Memory.sbuf)
U = k.make_tensor("u", k.Dtype.uint32, (32, 6), k.Memory.sbuf)
COL = k.AccessPattern(T, 32, (k.APPair(1, 1),), 0, 3)
F, I = k.Immediate(-2.5), k.Immediate(7)

OPERATORS = [
    kv.BatchNormStats(T, T, k.Dtype.float32), kv.BatchNormAggregate(T, T),
    kv.SelectReduce(T, U, T, COL, COL, k.AccumCmd.ZeroAccumulate, k.AluOp.max, True, k.Dtype.float32),
    kv.CopyPredicated(T, T, U, None, True),
    kv.NcAffineSelect(T, k.DataPattern(-3, (k.APPair(-1, 4), k.APPair(1, 4)), 2), T, F, None, k.AluOp.is_gt),
    kv.NcRangeSelect(T, k.AccumCmd.Accumulate, None, k.AluOp.max, k.AluOp.is_ge, k.AluOp.is_lt, COL, COL,
                     k.Immediate(4.0), T, k.Immediate(-3.4028234663852886e38)),
    kv.Max8(T, T), kv.FindIndex8(U, T, T, k.Dtype.uint32),
    kv.MatchReplace8(T, T, T, F, U), kv.Shuffle(T, T, tuple(k.Immediate(i) for i in range(32))),
    kv.SequenceBounds(T, T), kv.NcNGather(T, T, U), kv.NcLocalGather(T, T, U, k.Immediate(4), I),
    kv.NonzeroWithCount(T, T, I, k.Immediate(-1)),
    kr.Rng(U, k.Engine.pool), kr.Rand2(T, F, COL), kr.RandGetState(U, k.Engine.dve),
    kr.SetRngSeed(k.AccessPattern(U, 1, (k.APPair(1, 1),))), kr.RandSetState(U),
    kr.Dropout(T, T, kr.DropoutThresholdType.KeepRate, COL, k.Dtype.float32),
    kr.DevicePrint(T, 'a "quoted" prefix', kr.PrintOutputBuffer.stdout),
]


def kernel(op: object) -> k.Kernel:
    return k.Kernel("ops", [H], [H], [k.NcDmaCopy(T, H), op])  # type: ignore[list-item]


def test_every_family_operator_is_covered():
    assert {type(op) for op in OPERATORS} == set(kv.VECTOR_CTORS) | set(kr.RANDOM_CTORS)


@pytest.mark.parametrize("op", OPERATORS, ids=[type(o).__name__ for o in OPERATORS])
def test_round_trip_with_klr_head_names(op):
    text = write_kernel_json(kernel(op))
    ctor = {**kv.VECTOR_CTORS, **kr.RANDOM_CTORS}[type(op)]
    payload = json.loads(text)["body"][0]["body"][1]["oper"]["op"]
    assert list(payload) == [ctor]
    assert read_kernel_json(text) == kernel(op)
    assert read_kernel_json(json.dumps(json.loads(text), indent=1)) == kernel(op)  # checked path


@pytest.mark.parametrize("op, key, value, message", [
    (kv.Shuffle(T, T, tuple(k.Immediate(i) for i in range(32))), "shuffleMask", ["x"], r"shuffle\.shuffleMask\[0\]: error: unsupported Immediate"),
    (kr.DevicePrint(T, "p"), "printPrefix", 3, "printPrefix"),
    (kr.Dropout(T, T, kr.DropoutThresholdType.DropRate, F), "thresholdType", "Sometimes", "thresholdType"),
    (kv.NcAffineSelect(T, k.DataPattern(0, (k.APPair(1, 16),), 0), T, F), "cmpOp", "lt", "cmpOp"),
])
def test_malformed_field_is_located(op, key, value, message):
    doc = json.loads(write_kernel_json(kernel(op)))
    payload = doc["body"][0]["body"][1]["oper"]["op"]
    next(iter(payload.values()))[key] = value
    with pytest.raises(ParseError, match=message):
        read_kernel_json(json.dumps(doc))
