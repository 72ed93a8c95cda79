"""Simulator executors of random numbers and device printing (bir.inst_random).

Contract as sim/exec_vector.py. The generator state lives in `Machine.rng_state` (engine
name -> [128, 6] uint32 lanes, reset to power-on with the machine); draws, seeding, the
low-bit and uniform mappings are tilecc/counter_rng.py's, vectorised over lanes and
elements. Dropout moves the kept elements by value in data's dtype. DevicePrint writes
`<file:line>: <prefix> <tensor> <shape> <dtype>` and the values (numpy's text form, every
element) to stderr or stdout when it executes, so prints come out in program order.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from tilecc import counter_rng as rng
from tilecc.bir import inst_random as r
from tilecc.bir.enums import EngineType
from tilecc.bir.inst import AccessPattern, Inst
from tilecc.errors import SimError
from tilecc.sim.alu import to_f32
from tilecc.sim.dtypes import numpy_dtype
from tilecc.sim.machine import Machine
from tilecc.sim.operands import lanes, read, rows_of, scalar, write

_ENGINE_NAMES = {EngineType.DVE: "dve", EngineType.Pool: "pool"}


def _draw(m: Machine, inst: Inst, ap: AccessPattern) -> np.ndarray:
    """One word per element of `ap` from the lanes it covers, advancing their counters."""
    if (engine := _ENGINE_NAMES.get(inst.engine)) is None:
        raise SimError(f"engine {inst.engine.name} has no random number generator")
    lane = lanes(m, ap)
    count = 1
    for _, num in ap.ap[1:]:
        count *= num
    words, after = rng.draw_words(m.rng_state[engine][lane], count)
    m.rng_state[engine][lane] = after
    return words


def exec_rng(m: Machine, inst: r.InstRng) -> None:
    dst = inst.outs[0]
    write(m, dst, rng.low_bits(_draw(m, inst, dst), numpy_dtype(dst.dtype)))


def exec_rand2(m: Machine, inst: r.InstRand2) -> None:
    dst = inst.outs[0]
    u = rng.uniform(_draw(m, inst, dst))
    low, high = (to_f32(scalar(m, arg, u)) for arg in inst.ins[:2])
    write(m, dst, low + (high - low) * u)


def exec_dropout(m: Machine, inst: r.InstDropout) -> None:
    data = rows_of(read(m, inst.ins[0], "dropout data"))
    u = rng.uniform(_draw(m, inst, inst.outs[0]))
    rate = to_f32(scalar(m, inst.ins[1], u))
    below = u < rate
    dropped = ~below if inst.keep_rate else below
    write(m, inst.outs[0], np.where(dropped, np.zeros((), data.dtype), data))


def exec_get_state(m: Machine, inst: r.InstRandGetState) -> None:
    dst = inst.outs[0]
    write(m, dst, m.rng_state[_ENGINE_NAMES[inst.engine]][lanes(m, dst)])


def exec_set_state(m: Machine, inst: r.InstRandSetState) -> None:
    src = inst.ins[0]
    assert isinstance(src, AccessPattern)
    words = rows_of(read(m, src, "generator state")).astype(np.uint32)
    m.rng_state[_ENGINE_NAMES[inst.engine]][lanes(m, src)] = words


def exec_set_seed(m: Machine, inst: r.InstSetRngSeed) -> None:
    seed = np.ascontiguousarray(read(m, inst.ins[0], "seed")).reshape(-1)[:1].view(np.uint32)
    m.rng_state["dve"] = rng.seeded(int(seed[0]))


def exec_device_print(m: Machine, inst: r.InstDevicePrint) -> None:
    src = inst.ins[0]
    assert isinstance(src, AccessPattern)
    values = m.view(src, write=False, dma=True)
    where = f"{inst.location}: " if inst.location else ""
    stream = sys.stderr if inst.to_stderr else sys.stdout
    stream.write(f"{where}{inst.prefix} {src.memref} {list(values.shape)} {values.dtype}\n"
                 f"{np.array2string(np.asarray(values), threshold=sys.maxsize)}\n")
    stream.flush()


EXECUTORS: dict[type[Inst], Callable[[Machine, Any], None]] = {
    r.InstRng: exec_rng, r.InstRand2: exec_rand2, r.InstDropout: exec_dropout,
    r.InstRandGetState: exec_get_state, r.InstRandSetState: exec_set_state,
    r.InstSetRngSeed: exec_set_seed, r.InstDevicePrint: exec_device_print,
}
