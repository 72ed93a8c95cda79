"""KLR -> BIR leaves of random numbers and device printing (klr.ast_random -> bir.inst_random).

Contract as codegen/vector.py: `LEAVES[cls](cg, op)` appends one instruction. The engine of
rng / rand_get_state / rand_set_state goes through codegenEngine (dve -> DVE, pool ->
Pool); rand2, dropout and set_rng_seed run on the Vector Engine (DVE), device_print is
Unassigned. device_print's location is the statement's `pos` as "file:line" (the kernel
line the simulator names when it prints; "" when the position is unknown).
"""

from __future__ import annotations

from typing import Any, Callable

from tilecc.bir import inst_random as r
from tilecc.bir.enums import EngineType
from tilecc.codegen import enum_maps as m
from tilecc.klr import ast as k
from tilecc.klr import ast_random as kr

DVE = EngineType.DVE


def _location(pos: k.Pos | None) -> str:
    if pos is None:
        return ""
    return f"{pos.filename or '<kernel>'}:{pos.line}"


def codegen_rng(cg: Any, op: kr.Rng) -> None:
    out = cg.tensor_ref(op.dst)
    cg.emit(r.InstRng(cg.name(op), m.codegen_engine(op.engine), [], [out]))


def codegen_rand2(cg: Any, op: kr.Rand2) -> None:
    out = cg.tensor_ref(op.dst)
    cg.emit(r.InstRand2(cg.name(op), DVE, [cg.operand(op.min), cg.operand(op.max)], [out]))


def codegen_get_state(cg: Any, op: kr.RandGetState) -> None:
    out = cg.tensor_ref(op.dst)
    cg.emit(r.InstRandGetState(cg.name(op), m.codegen_engine(op.engine), [], [out]))


def codegen_set_state(cg: Any, op: kr.RandSetState) -> None:
    cg.emit(r.InstRandSetState(cg.name(op), m.codegen_engine(op.engine), [cg.tensor_ref(op.src)], []))


def codegen_set_seed(cg: Any, op: kr.SetRngSeed) -> None:
    cg.emit(r.InstSetRngSeed(cg.name(op), DVE, [cg.tensor_ref(op.src)], []))


def codegen_dropout(cg: Any, op: kr.Dropout) -> None:
    out = cg.tensor_ref(op.dst)
    cg.emit(r.InstDropout(cg.name(op), DVE, [cg.tensor_ref(op.src), cg.operand(op.threshold)], [out],
                          keep_rate=op.threshold_type == kr.DropoutThresholdType.KeepRate))


def codegen_device_print(cg: Any, op: kr.DevicePrint) -> None:
    cg.emit(r.InstDevicePrint(cg.name(op), EngineType.Unassigned, [cg.tensor_ref(op.src)], [],
                              prefix=op.print_prefix, location=_location(op.pos),
                              to_stderr=op.buffer == kr.PrintOutputBuffer.stderr))


LEAVES: dict[type, Callable[[Any, Any], None]] = {
    kr.Rng: codegen_rng, kr.Rand2: codegen_rand2, kr.RandGetState: codegen_get_state,
    kr.RandSetState: codegen_set_state, kr.SetRngSeed: codegen_set_seed,
    kr.Dropout: codegen_dropout, kr.DevicePrint: codegen_device_print,
}
