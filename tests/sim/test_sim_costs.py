"""The documented cost formula of each instruction (tilecc/sim/costs.py, NKI ISA reference
"Estimated instruction cost"), the labelled fallback, and the schedule: independent engines
overlap, dependencies through memory serialise (tilecc/sim/profile.py)."""

from __future__ import annotations

import json

import pytest

from bir_builders import ProgramBuilder, imm
from tilecc.bir.enums import (ActivationFunctionType as Act, AluOpType as Op, BirDtype,
                              EngineAccumulationType as Acc, EngineType)
from tilecc.bir.inst import (InstActivation, InstExponential, InstIota, InstMemset, InstReciprocal,
                             InstTensorCopy, InstTensorReduce, InstTensorScalarPtr, InstTensorTensor,
                             SourcePos)
from tilecc.sim.costs import COSTS, MIN_II
from tilecc.sim.profile import (ALL_COSTS, DMA_BYTES_PER_CYCLE, DMA_FIXED_CYCLES, chrome_trace,
                                estimate, schedule)

BF16, F32 = BirDtype.bfloat16, BirDtype.float32
DVE, ACT = EngineType.DVE, EngineType.Activation


def _pb(n: int, dtype: BirDtype = F32) -> ProgramBuilder:
    pb = ProgramBuilder()
    for name in ("a", "b", "c", "r"):
        pb.tile(name, (128, n) if name != "r" else (128, 1), dtype)
    return pb


@pytest.mark.parametrize("n", [8, 64, 1000])
def test_tensor_scalar_activation_copy_and_reciprocal(n):
    pb = _pb(n)
    a, c, r = pb.ap("a"), pb.ap("c"), pb.ap("r")
    assert estimate(InstTensorScalarPtr("ts", DVE, [a, imm(1.0)], [c], op0=Op.add)) == (max(MIN_II, n), "documented")
    reduce = InstTensorScalarPtr("tsr", DVE, [a, imm(1.0)], [c, r], op0=Op.add, op1=Op.add, acc=Acc.ZeroAccumulate)
    assert estimate(reduce)[0] == max(MIN_II, n) + MIN_II
    act = InstActivation("act", ACT, [a, imm(0.0)], [c], func=Act.Exp)
    assert estimate(act)[0] == max(MIN_II, n)
    act_reduce = InstActivation("actr", ACT, [a, imm(0.0), r], [c], func=Act.Exp, acc=Acc.ZeroAccumulate)
    assert estimate(act_reduce)[0] == max(MIN_II, n) + MIN_II
    assert estimate(InstTensorCopy("cp", DVE, [a], [c]))[0] == max(MIN_II, n)
    assert estimate(InstReciprocal("rc", DVE, [a], [c]))[0] == max(MIN_II, 8 * n)
    assert estimate(InstIota("io", EngineType.Pool, [], [c]))[0] == 150 + n


def test_tensor_tensor_bf16_fast_row_and_the_2n_row():
    n = 100
    f32, bf16 = _pb(n), _pb(n, BF16)
    assert estimate(InstTensorTensor("tt", DVE, [f32.ap("a"), f32.ap("b")], [f32.ap("c")], op=Op.add))[0] == 2 * n
    assert estimate(InstTensorTensor("tt", DVE, [bf16.ap("a"), bf16.ap("b")], [bf16.ap("c")], op=Op.mult))[0] == n
    assert estimate(InstTensorTensor("tt", DVE, [bf16.ap("a"), bf16.ap("b")], [bf16.ap("c")], op=Op.divide))[0] == 2 * n
    strided = bf16.ap("a", [(2, 50)])
    assert estimate(InstTensorTensor("tt", DVE, [strided, strided], [bf16.ap("c", [(1, 50)])], op=Op.add))[0] == 2 * 50
    assert estimate(InstTensorTensor("tt", DVE, [f32.ap("a", [(1, 4)])] * 2, [f32.ap("c", [(1, 4)])]))[0] == MIN_II


def test_tensor_reduce_scan_and_scalar_tensor_tensor():
    n = 256
    f32, bf16 = _pb(n), _pb(n, BF16)
    assert estimate(InstTensorReduce("red", DVE, [f32.ap("a")], [f32.ap("r")], op=Op.add))[0] == n
    assert estimate(InstTensorReduce("red", DVE, [bf16.ap("a")], [bf16.ap("r")], op=Op.max))[0] == n / 2
    assert estimate(InstTensorReduce("red", DVE, [bf16.ap("a")], [bf16.ap("r")], op=Op.mult))[0] == n
    scan = InstTensorScalarPtr("scan", DVE, [f32.ap("a"), imm(0.0), f32.ap("b")], [f32.ap("c")],
                               op0=Op.add, op1=Op.mult, is_tensor_tensor_scan=True,
                               is_scalar_tensor_tensor=True)
    assert estimate(scan)[0] == 2 * n
    stt = InstTensorScalarPtr("stt", DVE, [bf16.ap("a"), imm(1.0), bf16.ap("b")], [bf16.ap("c")],
                              op0=Op.subtract, op1=Op.mult, is_scalar_tensor_tensor=True)
    assert estimate(stt)[0] == n
    stt.op0 = Op.add
    assert estimate(stt)[0] == 2 * n


def test_memset_zero_into_half_precision_is_twice_as_fast():
    n = 512
    assert estimate(InstMemset("ms", DVE, [imm(0)], [_pb(n, BF16).ap("c")]))[0] == n / 2
    assert estimate(InstMemset("ms", DVE, [imm(1.0)], [_pb(n, BF16).ap("c")]))[0] == n
    assert estimate(InstMemset("ms", DVE, [imm(0)], [_pb(n).ap("c")]))[0] == n
    assert estimate(InstMemset("ms", DVE, [imm(0)], [_pb(16, BF16).ap("c")]))[0] == MIN_II


def test_instructions_without_a_published_formula_get_the_labelled_fallback():
    pb = _pb(300)
    pb.arg_in("h", (128, 300))
    exp = InstExponential("exp", DVE, [imm(0.0), imm(0.0), pb.ap("a")], [pb.ap("c")])
    assert InstExponential not in ALL_COSTS and estimate(exp) == (300, "fallback")
    pb.load("a", "h")
    cycles, source = estimate(pb.insts[-1])
    assert source == "fallback" and cycles == DMA_FIXED_CYCLES + 128 * 300 * 4 / DMA_BYTES_PER_CYCLE
    assert set(COSTS) <= set(ALL_COSTS)


def _two_engine_program(dependent: bool) -> ProgramBuilder:
    pb = _pb(1024)
    pb.add(InstActivation("act", ACT, [pb.ap("a"), imm(0.0)], [pb.ap("b")], func=Act.Exp))
    src = pb.ap("b") if dependent else pb.ap("a")
    pb.add(InstTensorScalarPtr("ts", DVE, [src, imm(2.0)], [pb.ap("c")], op0=Op.mult))
    return pb


def test_independent_engines_overlap_and_a_dependency_through_memory_waits():
    act, ts = schedule(_two_engine_program(dependent=False).program())
    assert (act.start, ts.start) == (0, 0) and act.track != ts.track
    act, ts = schedule(_two_engine_program(dependent=True).program())
    assert ts.start == act.end == 1024 and ts.end == 2048


def test_one_engine_runs_in_order_and_a_write_waits_for_earlier_reads():
    pb = _pb(1024)
    pb.add(InstTensorScalarPtr("t1", DVE, [pb.ap("a"), imm(2.0)], [pb.ap("c")], op0=Op.mult))
    pb.add(InstTensorScalarPtr("t2", DVE, [pb.ap("b"), imm(2.0)], [pb.ap("r", [(1, 1)])], op0=Op.mult))
    pb.add(InstActivation("war", ACT, [pb.ap("b"), imm(0.0)], [pb.ap("a")], func=Act.Exp))
    t1, t2, war = schedule(pb.program())
    assert t2.start == t1.end and war.start == t1.end   # writes a, which t1 reads


def test_the_chrome_trace_has_one_track_per_engine_and_named_slices():
    pb = _two_engine_program(dependent=False)
    pb.insts[0].pos = SourcePos("/k/kernel.py", 12, 8)
    doc = chrome_trace(schedule(pb.program()))
    threads = {e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "thread_name"}
    assert threads == {"Scalar Engine (ACT)", "Vector Engine (DVE)"}
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert slices[0]["name"] == "kernel.py:12" and slices[1]["name"] == "ts"
    assert slices[0]["args"]["estimated_cycles"] == 1024 and "not hardware measurements" in doc["otherData"]["note"]
    json.dumps(doc)
