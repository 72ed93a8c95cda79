"""Verifier checks of the random-number and device-print instructions (bir.inst_random).

Contract as bir/verifier_vector.py. Rules from the NKI ISA pages (nki.isa.rng, rand2,
rand_get_state, rand_set_state, set_rng_seed, dropout; nl.device_print): generator
instructions run on the Vector (DVE) or GpSimd (Pool) engine -- rand2, dropout and
set_rng_seed on the Vector Engine only -- and Pool cannot access PSUM; rng writes an
integer dtype (int8 / int16 / int32 / uint8 / uint16 / uint32); the state tiles are
uint32 with tilecc's 6 words per lane (tilecc/counter_rng.py), rand_set_state's in SB;
the seed is one 32-bit element; rand2 / dropout scalars are immediates or [P, 1] tiles and
dropout's dst has data's dtype and element count; device_print reads one tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tilecc.bir import inst as b
from tilecc.bir import inst_random as r
from tilecc.bir.enums import BIR_DTYPE_SIZE, BirDtype, EngineType, MemoryKind
from tilecc.bir.verifier_vector import INT_DTYPES

if TYPE_CHECKING:
    from tilecc.bir.verifier import InstChecker

_GENERATORS = (EngineType.DVE, EngineType.Pool)


def _engine(c: InstChecker, allowed: tuple[EngineType, ...]) -> None:
    if c.inst.engine not in allowed:
        raise c.fail(f"runs on {' or '.join(e.name for e in allowed)}, not {c.inst.engine.name}")
    if c.inst.engine == EngineType.Pool:
        for arg in (*c.inst.ins, *c.inst.outs):
            if isinstance(arg, b.AccessPattern) and c.locs[arg.memref].kind == MemoryKind.PSUM:
                raise c.fail(f"'{arg.memref}' is in PSUM, which GpSimd Engine cannot access")


def _state_tile(c: InstChecker, ap: b.AccessPattern) -> None:
    per = 1
    for _, num in ap.ap[1:]:
        per *= num
    if ap.dtype != BirDtype.uint32 or per != 6:
        raise c.fail(f"the generator state '{ap.memref}' must be uint32 with 6 words per "
                     f"partition, found {ap.dtype.name} with {per}")


def check_rng(c: InstChecker) -> None:
    c.count((0,), 1)
    _engine(c, _GENERATORS)
    if c.inst.outs[0].dtype not in INT_DTYPES:
        raise c.fail(f"rng writes an integer dtype, found {c.inst.outs[0].dtype.name}")


def check_rand2(c: InstChecker) -> None:
    c.count((2,), 1)
    _engine(c, (EngineType.DVE,))
    for i, what in enumerate(("min", "max")):
        c.scalar(c.inst.ins[i], what)


def check_get_state(c: InstChecker) -> None:
    c.count((0,), 1)
    _engine(c, _GENERATORS)
    _state_tile(c, c.inst.outs[0])


def check_set_state(c: InstChecker) -> None:
    c.count((1,), 0)
    _engine(c, _GENERATORS)
    src = c.tile(c.inst.ins[0], "the state")
    if c.locs[src.memref].kind != MemoryKind.SB:
        raise c.fail(f"the state '{src.memref}' must be in SB")
    _state_tile(c, src)


def check_set_seed(c: InstChecker) -> None:
    c.count((1,), 0)
    _engine(c, (EngineType.DVE,))
    src = c.tile(c.inst.ins[0], "the seed")
    count = 1
    for _, num in src.ap:
        count *= num
    if count != 1 or BIR_DTYPE_SIZE[src.dtype] != 4:
        raise c.fail(f"the seed '{src.memref}' must be one 32-bit element, found {count} of "
                     f"{src.dtype.name}")


def check_dropout(c: InstChecker) -> None:
    c.count((2,), 1)
    _engine(c, (EngineType.DVE,))
    data = c.tile(c.inst.ins[0], "data")
    c.scalar(c.inst.ins[1], "the rate")
    if data.dtype != c.inst.outs[0].dtype:
        raise c.fail(f"data and dst differ in dtype ({data.dtype.name}, {c.inst.outs[0].dtype.name})")
    c.same_size(data, c.inst.outs[0])


def check_device_print(c: InstChecker) -> None:
    c.count((1,), 0)
    c.tile(c.inst.ins[0], "the printed tensor")


CHECKS: dict[type[b.Inst], Callable[[InstChecker], None]] = {
    r.InstRng: check_rng, r.InstRand2: check_rand2, r.InstRandGetState: check_get_state,
    r.InstRandSetState: check_set_state, r.InstSetRngSeed: check_set_seed,
    r.InstDropout: check_dropout, r.InstDevicePrint: check_device_print,
}
