"""Verifier checks of the Vector / GpSimd-family and random-number instructions: a valid
instruction passes, and one failing program per rule names the instruction and the rule."""

from __future__ import annotations

import pytest

from tilecc.bir import inst as b
from tilecc.bir import inst_random as r
from tilecc.bir import inst_vector as v
from tilecc.bir.enums import AluOpType, BirDtype, EngineType, MemoryKind
from tilecc.bir.verifier import verify_program
from tilecc.errors import VerifyError

F32, U8, U16, U32, I32 = BirDtype.float32, BirDtype.uint8, BirDtype.uint16, BirDtype.uint32, BirDtype.int32
DVE, POOL = EngineType.DVE, EngineType.Pool
SIZES = {F32: 4, I32: 4, U32: 4, U16: 2, U8: 1}
LOCS = {"x": F32, "y": F32, "p": U8, "i": I32, "u": U32, "h": U16}


def ap(name: str, parts: int = 32, elems: int = 12, psum: bool = False) -> b.AccessPattern:
    dtype = LOCS[name.removesuffix("_ps")]
    return b.AccessPattern(name, dtype, 0, ((600, parts), (1, elems)))


def imm(value: float | int) -> b.Immediate:
    return b.Immediate(F32 if isinstance(value, float) else I32, value)


def program(inst: b.Inst) -> b.Program:
    locs = [b.MemoryLocation(n, MemoryKind.SB, d, 128, 600 * SIZES[d]) for n, d in LOCS.items()]
    locs += [b.MemoryLocation(f"{n}_ps", MemoryKind.PSUM, d, 128, 600 * SIZES[d]) for n, d in LOCS.items()]
    return b.Program("k", locs, [], [], [inst])


VALID = [
    v.InstBatchNormStats("bs", DVE, [ap("x", elems=512)], [ap("y", elems=6)]),
    v.InstBatchNormAggregate("ba", DVE, [ap("x", elems=12)], [ap("y", elems=2)]),
    v.InstSelectReduce("sr", DVE, [ap("p"), ap("x"), imm(0.0)], [ap("y"), ap("y", elems=1)]),
    v.InstCopyPredicated("cp", DVE, [ap("x"), ap("p")], [ap("y")]),
    v.InstAffineSelect("as", POOL, [ap("x"), imm(0.0)], [ap("y")], pattern=((1, 3), (1, 4))),
    v.InstRangeSelect("rs", DVE, [ap("x"), ap("y", elems=1), ap("y", elems=1), imm(0.0), imm(-1.0)],
                      [ap("y")]),
    v.InstMax8("m8", DVE, [ap("x")], [ap("y", elems=8)]),
    v.InstFindIndex8("f8", DVE, [ap("x"), ap("y", elems=8)], [ap("u", elems=8)]),
    v.InstMatchReplace8("r8", DVE, [ap("x"), ap("y", elems=8), imm(0.0)], [ap("y"), ap("u", elems=8)]),
    v.InstShuffle("sh", DVE, [ap("x")] + [imm(0)] * 32, [ap("y")]),
    v.InstSequenceBounds("sb", POOL, [ap("x", parts=1)], [ap("y", parts=1, elems=24)]),
    v.InstNGather("ng", POOL, [ap("x"), ap("u")], [ap("y")]),
    v.InstLocalGather("lg", POOL, [ap("x"), ap("h", elems=2)], [ap("y", elems=64)], num_elem_per_idx=2),
    v.InstNonzeroWithCount("nz", POOL, [ap("x")], [ap("i", elems=13)]),
    r.InstRng("rg", POOL, [], [ap("u")]),
    r.InstRand2("r2", DVE, [imm(0.0), ap("y", elems=1)], [ap("x")]),
    r.InstRandGetState("gs", DVE, [], [ap("u", elems=6)]),
    r.InstRandSetState("ss", POOL, [ap("u", elems=6)], []),
    r.InstSetRngSeed("sd", DVE, [ap("u", parts=1, elems=1)], []),
    r.InstDropout("do", DVE, [ap("x"), imm(0.5)], [ap("y")]),
    r.InstDevicePrint("dp", EngineType.Unassigned, [ap("x")], []),
]


@pytest.mark.parametrize("inst", VALID, ids=[type(i).__name__ for i in VALID])
def test_valid_instruction_passes(inst):
    verify_program(program(inst))


BAD = [
    (v.InstBatchNormStats("bs", DVE, [ap("x", elems=513)], [ap("y", elems=6)]), "1..512"),
    (v.InstBatchNormStats("bs", DVE, [ap("x")], [ap("y", elems=5)]), "expected 6"),
    (v.InstBatchNormStats("bs", DVE, [ap("x")], [ap("y", parts=64, elems=6)]), "partition count"),
    (v.InstBatchNormAggregate("ba", DVE, [ap("x", elems=10)], [ap("y", elems=2)]), "multiple of 3"),
    (v.InstSelectReduce("sr", DVE, [ap("x"), ap("x"), imm(0.0)], [ap("y")]), "predicate"),
    (v.InstSelectReduce("sr", DVE, [ap("p"), ap("i"), imm(0.0)], [ap("y")]), "cannot be int32"),
    (v.InstSelectReduce("sr", DVE, [ap("p_ps"), ap("x_ps"), imm(0.0)], [ap("y")]), "both be in PSUM"),
    (v.InstSelectReduce("sr", DVE, [ap("p"), ap("x"), ap("y")], [ap("y")]), "on_false"),
    (v.InstSelectReduce("sr", DVE, [ap("p"), ap("x"), imm(0.0)], [ap("y"), ap("i", elems=1)]), "reduce_res"),
    (v.InstCopyPredicated("cp", DVE, [ap("x"), ap("p")], [ap("i")]), "differ in dtype"),
    (v.InstAffineSelect("as", POOL, [ap("x_ps"), imm(0.0)], [ap("y")], pattern=((1, 12),)), "GpSimd"),
    (v.InstAffineSelect("as", POOL, [ap("x"), imm(0)], [ap("y")], pattern=((1, 12),)), "float32 immediate"),
    (v.InstAffineSelect("as", POOL, [ap("x"), imm(0.0)], [ap("y")], pattern=((1, 11),)), "covers 11"),
    (v.InstRangeSelect("rs", DVE, [ap("x"), ap("y", elems=1), ap("y", elems=1), imm(0.0), imm(-1.0)],
                       [ap("y")], comp_op0=AluOpType.add), "comparison add"),
    (v.InstRangeSelect("rs", DVE, [ap("x"), ap("i", elems=1), ap("y", elems=1), imm(0.0), imm(-1.0)],
                       [ap("y")]), "a bound"),
    (v.InstMax8("m8", DVE, [ap("x", elems=7)], [ap("y", elems=8)]), "8..16384"),
    (v.InstFindIndex8("f8", DVE, [ap("x"), ap("y", elems=8)], [ap("y", elems=8)]), "uint16"),
    (v.InstFindIndex8("f8", DVE, [ap("x"), ap("y", elems=7)], [ap("u", elems=8)]), "vals"),
    (v.InstShuffle("sh", DVE, [ap("x")] + [imm(40)] * 32, [ap("y")]), "shuffle_mask"),
    (v.InstShuffle("sh", DVE, [ap("x")] + [imm(0)] * 31, [ap("y")]), "32 mask"),
    (v.InstSequenceBounds("sb", POOL, [ap("x", parts=2)], [ap("y", parts=2, elems=24)]), "one partition"),
    (v.InstNGather("ng", POOL, [ap("x"), ap("i")], [ap("y")]), "indices"),
    (v.InstLocalGather("lg", POOL, [ap("x"), ap("h", elems=2)], [ap("y", elems=96)],
                       num_elem_per_idx=3), "num_elem_per_idx"),
    (v.InstLocalGather("lg", POOL, [ap("x", parts=8), ap("h", parts=8, elems=2)], [ap("y", parts=8, elems=32)]),
     "groups of 16"),
    (v.InstNonzeroWithCount("nz", POOL, [ap("x")], [ap("i")]), "expected 13"),
    (r.InstRng("rg", DVE, [], [ap("x")]), "integer dtype"),
    (r.InstRng("rg", POOL, [], [ap("u_ps")]), "PSUM"),
    (r.InstRng("rg", EngineType.Activation, [], [ap("u")]), "runs on DVE or Pool"),
    (r.InstRand2("r2", POOL, [imm(0.0), imm(1.0)], [ap("x")]), "runs on DVE"),
    (r.InstRandGetState("gs", DVE, [], [ap("u", elems=24)]), "6 words"),
    (r.InstRandSetState("ss", DVE, [ap("u_ps", elems=6)], []), "must be in SB"),
    (r.InstSetRngSeed("sd", DVE, [ap("h", parts=1, elems=1)], []), "32-bit"),
    (r.InstDropout("do", DVE, [ap("x"), imm(0.5)], [ap("i")]), "differ in dtype"),
]


@pytest.mark.parametrize("inst, message", BAD, ids=[f"{type(i).__name__}-{m}" for i, m in BAD])
def test_rule_violation_names_the_instruction(inst, message):
    with pytest.raises(VerifyError, match=message) as info:
        verify_program(program(inst))
    assert f"'{inst.name}' ({type(inst).__name__[4:]})" in str(info.value)
