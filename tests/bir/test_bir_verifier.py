"""birverifier checks: one failing program per check, each naming the instruction."""

from __future__ import annotations

import dataclasses
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from tilecc.bir import inst as b
from tilecc.bir.enums import (AluOpType, AxisListType, BirDtype, EngineAccumulationType,
                              EngineType, MemoryKind)
from tilecc.bir.verifier import verify_program
from tilecc.errors import VerifyError
from tilecc.sim.execute import simulate

F32, I32 = BirDtype.float32, BirDtype.int32


def loc(name: str, partitions: int = 128, elems: int = 64, dtype: BirDtype = F32,
        kind: MemoryKind = MemoryKind.SB) -> b.MemoryLocation:
    return b.MemoryLocation(name, kind, dtype, partitions, elems * 4)


def ap(name: str, partitions: int = 128, elems: int = 64, row: int = 64, offset: int = 0,
       dtype: BirDtype = F32) -> b.AccessPattern:
    return b.AccessPattern(name, dtype, offset, ((row, partitions), (1, elems)))


def program(*insts: b.Inst, locs: list[b.MemoryLocation] | None = None) -> b.Program:
    base = [loc("x"), loc("y"), loc("z"), loc("i", dtype=I32), loc("col", elems=1),
            loc("hin", kind=MemoryKind.HBM), loc("p32", elems=32)]
    return b.Program("k", base + (locs or []), [b.IOTensor("hin", F32, (128, 64))], [],
                     list(insts))


def tt(**kw: Any) -> b.InstTensorTensor:
    fields: dict[str, Any] = dict(name="TT", engine=EngineType.DVE, ins=[ap("x"), ap("z")],
                                  outs=[ap("y")], op=AluOpType.add)
    fields.update(kw)
    return b.InstTensorTensor(**fields)


def reduce(axis: AxisListType, src: b.AccessPattern, out: b.AccessPattern,
           negate: bool = False) -> b.InstTensorReduce:
    return b.InstTensorReduce("R", EngineType.Pool, [src], [out], op=AluOpType.add, axis=axis,
                              negate=negate)


def fails(p: b.Program, message: str) -> None:
    with pytest.raises(VerifyError, match=message):
        verify_program(p)


def test_valid_program_passes() -> None:
    verify_program(program(tt(), reduce(AxisListType.X, ap("x"), ap("col", elems=1, row=1))))


def test_tensor_tensor_checks() -> None:
    fails(program(tt(ins=[ap("x"), ap("i", dtype=I32)])),
          r"instruction 0 'TT' \(TensorTensor\): SB inputs differ in dtype")
    fails(program(tt(acc=EngineAccumulationType.Accumulate)), "acc must be Idle")
    fails(program(tt(engine=EngineType.Unassigned)), "engine must be assigned")
    fails(program(tt(ins=[ap("x"), b.Immediate(F32, 1.0)])), "input 1 must be a tile")
    fails(program(tt(ins=[ap("x", elems=32), ap("z")])), "differ in element count")


def test_cross_lane_reduce_checks() -> None:
    good = reduce(AxisListType.C, ap("p32", elems=32, row=32), ap("p32", 1, 32, 32))
    verify_program(program(good))
    fails(program(dataclasses.replace(good, negate=True)), "Cross-lane-reduce cannot negate")
    fails(program(reduce(AxisListType.C, ap("x", 48, 64), ap("y", 1, 64))),
          "multiples of 32")
    fails(program(reduce(AxisListType.XYZWC, ap("x", 128, 16), ap("y", 1, 16))),
          "multiples of 32")
    fails(program(reduce(AxisListType.XY, ap("x"), ap("col", elems=1, row=1))),
          "folds 2 free dims")
    fails(program(reduce(AxisListType.X, ap("x"), ap("y"))), "does not match")


def test_scalar_tensor_tensor_checks() -> None:
    stt = b.InstTensorScalarPtr("STT", EngineType.DVE, [ap("x"), ap("col", elems=1, row=1),
                                                        ap("z")], [ap("y")],
                                is_scalar_tensor_tensor=True)
    verify_program(program(stt))
    fails(program(dataclasses.replace(stt, ins=[ap("x"), ap("z"), ap("z")])),
          r"'STT' \(TensorScalarPtr\): scalar must be an immediate or a \[P,1\] tile")
    fails(program(dataclasses.replace(stt, ins=[ap("x"), b.Immediate(F32, 1.0),
                                                b.Immediate(F32, 2.0)])), "tensor1 must be a tile")
    fails(program(dataclasses.replace(stt, acc=EngineAccumulationType.ZeroAccumulate)),
          "acc must be Idle")


def test_elementwise_sizes() -> None:
    copy = b.InstDMACopy("C", EngineType.DMA, [ap("hin", elems=32, row=64)], [ap("x")])
    fails(program(copy), r"'C' \(DMACopy\): input of 4096 elements, output of 8192")
    verify_program(program(dataclasses.replace(copy, ins=[ap("hin")])))


def test_tensor_scalar_addr_flag_must_match() -> None:
    ts = b.InstTensorScalarPtr("TS", EngineType.DVE, [ap("x"), ap("col", elems=1, row=1)],
                               [ap("y")])
    fails(program(ts), "is_tensor_scalar_addr is False")
    verify_program(program(dataclasses.replace(ts, is_tensor_scalar_addr=True)))


def test_partition_limits_and_starts() -> None:
    fails(program(locs=[loc("big", partitions=129)]), "129 partitions")
    fails(program(tt(ins=[ap("x", 64, offset=32 * 64), ap("z", 64)],
                     outs=[ap("y", 64)])), "cannot start at partition 32")
    verify_program(program(tt(ins=[ap("x", 32, offset=96 * 64), ap("z", 32)],
                              outs=[ap("y", 32, offset=32 * 64)])))
    fails(program(tt(ins=[ap("x", 64, offset=64 * 64 + 1, elems=64), ap("z", 64)],
                     outs=[ap("y", 64)])), "outside the row")
    fails(program(tt(ins=[ap("x", row=32), ap("z")])), "partition step 32 is not the row")


def test_locations_and_immediates() -> None:
    fails(program(locs=[loc("x")]), "memory location 'x' is declared twice")
    fails(program(locs=[b.MemoryLocation("s", MemoryKind.SB, F32, 128, 0x30004)]),
          "exceed the 196608 of SB")
    fails(program(tt(ins=[ap("nope"), ap("z")])), "unknown memory location 'nope'")
    fails(program(tt(ins=[ap("x", dtype=I32), ap("z")])), "access of 'x' as int32")
    memset = b.InstMemset("M", EngineType.Pool, [b.Immediate(I32, 2 ** 31)], [ap("i", dtype=I32)])
    fails(program(memset), "not a valid int32")
    bad_io = program()
    bad_io.inputs = [b.IOTensor("hin", F32, (128, 32))]
    fails(bad_io, "does not match its memory location")


def test_dma_copies_may_start_at_any_partition() -> None:
    """nl.store(out[3:8], t[5:10]) reads SB partitions 5..9: DMA queues are not bound to the
    engines' 32-partition banks, but an engine instruction on the same access is."""
    copy = b.InstDMACopy("D", EngineType.Unassigned, [ap("x", 5, offset=5 * 64)],
                         [ap("hin", 5, offset=3 * 64)])
    verify_program(program(copy))
    shared = ap("x", 5, offset=5 * 64)
    fails(program(dataclasses.replace(copy, ins=[shared]), tt(ins=[shared, ap("z", 5)],
                                                              outs=[ap("y", 5)])),
          r"instruction 1 'TT'.*5 partitions cannot start at partition 5")


def mixed_tensor_tensor(kind0: MemoryKind) -> b.Program:
    """out = t0 + s where t0 (fp32, in `kind0`) and s (bf16, SB) are loaded from HBM."""
    bf16 = BirDtype.bfloat16
    locs = [b.MemoryLocation("a", MemoryKind.HBM, F32, 128, 256),
            b.MemoryLocation("h", MemoryKind.HBM, bf16, 128, 128),
            b.MemoryLocation("out", MemoryKind.HBM, F32, 128, 256),
            b.MemoryLocation("t0", kind0, F32, 128, 256),
            b.MemoryLocation("s", MemoryKind.SB, bf16, 128, 128),
            b.MemoryLocation("y", MemoryKind.SB, F32, 128, 256)]
    s = ap("s", dtype=bf16)
    insts: list[b.Inst] = [
        b.InstDMACopy("L0", EngineType.DMA, [ap("a")], [ap("t0")]),
        b.InstDMACopy("L1", EngineType.DMA, [ap("h", dtype=bf16)], [s]),
        tt(ins=[ap("t0"), s]),
        b.InstDMACopy("S", EngineType.DMA, [ap("y")], [ap("out")])]
    return b.Program("mixed", locs, [b.IOTensor("a", F32, (128, 64)),
                                     b.IOTensor("h", bf16, (128, 64))],
                     [b.IOTensor("out", F32, (128, 64))], insts)


def test_tensor_tensor_dtype_rule_is_for_two_sb_inputs() -> None:
    """checkTensorTensorInputType (spec 003): both SBUF-resident inputs share a dtype; an
    fp32 PSUM tile may meet a bf16 SB tile, and the simulator adds them in float32."""
    fails(mixed_tensor_tensor(MemoryKind.SB),
          r"'TT' \(TensorTensor\): SB inputs differ in dtype \(float32, bfloat16\)")
    program = mixed_tensor_tensor(MemoryKind.PSUM)
    verify_program(program)
    rng = np.random.default_rng(3)
    a = rng.uniform(-1e3, 1e3, (128, 64)).astype(np.float32)
    h = rng.uniform(-1e3, 1e3, (128, 64)).astype(ml_dtypes.bfloat16)
    a[0, :3], h[0, :3] = [np.inf, -1.5, np.nan], [-np.inf, 2.0 ** -100, 1.0]
    out = simulate(program, {"a": a, "h": h})["out"]
    with np.errstate(invalid="ignore"):  # inf + -inf = NaN is the expected value
        expected = a + h.astype(np.float32)
    np.testing.assert_array_equal(out, expected)
    assert np.isnan(out[0, 0]) and out[0, 1] == np.float32(-1.5) + np.float32(2.0 ** -100)
