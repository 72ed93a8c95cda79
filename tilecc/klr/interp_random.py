"""Reference semantics of random numbers and device printing (klr.ast_random).

Contract as klr/interp_vector.py. The generator is the one both executors share
(tilecc/counter_rng.py: Philox4x32-10, 6 state words per lane, seeds and counters);
this module applies it to the KLR operators lane by lane from the access's partitions,
as the NKI ISA pages describe the instructions (the simulator applies it to BIR).
DevicePrint prints as the simulator does, with the statement's `pos` as file:line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from tilecc import counter_rng as rng
from tilecc.errors import InterpError
from tilecc.klr import ast as k
from tilecc.klr import ast_random as kr
from tilecc.klr.interp_state import State, lanes, rows
from tilecc.klr.interp_alu import np_dtype


def _words(s: State, engine: k.Engine, access: k.Access) -> np.ndarray:
    name = {k.Engine.dve: "dve", k.Engine.pool: "pool"}.get(engine)
    if name is None:
        raise InterpError(f"engine {engine.name} has no random number generator")
    parts, free = k.access_shape(access)
    count = int(np.prod(free)) if free else 1
    out = np.zeros((parts, count), np.uint32)
    state = s.rng_state[name]
    for i, lane in enumerate(range(lanes(access).start, lanes(access).stop)):
        words, after = rng.draw_words(state[lane:lane + 1], count)
        out[i] = words[0]
        state[lane] = after[0]
    return out


def _column(s: State, operand: k.Operand, parts: int) -> np.ndarray:
    if isinstance(operand, k.Immediate):
        return np.full((parts, 1), operand.value, np.float32)
    return s.read(operand).reshape(parts, 1).astype(np.float32)


def run_rng(s: State, op: kr.Rng) -> None:
    dtype = np_dtype(k.access_tensor(op.dst).dtype)
    s.write(op.dst, rng.low_bits(_words(s, op.engine, op.dst), dtype))


def run_rand2(s: State, op: kr.Rand2) -> None:
    u = rng.uniform(_words(s, k.Engine.dve, op.dst))
    low, high = _column(s, op.min, u.shape[0]), _column(s, op.max, u.shape[0])
    s.write(op.dst, (low + (high - low) * u).astype(np.float32))


def run_dropout(s: State, op: kr.Dropout) -> None:
    data = rows(s.read(op.src))
    u = rng.uniform(_words(s, k.Engine.dve, op.dst))
    rate = _column(s, op.threshold, u.shape[0])
    if op.threshold_type == kr.DropoutThresholdType.DropRate:
        keep = u >= rate
    else:
        keep = u < rate
    out = data.copy()
    out[~keep] = 0
    s.write(op.dst, out)


def run_get_state(s: State, op: kr.RandGetState) -> None:
    name = "pool" if op.engine == k.Engine.pool else "dve"
    s.write(op.dst, s.rng_state[name][lanes(op.dst)])


def run_set_state(s: State, op: kr.RandSetState) -> None:
    name = "pool" if op.engine == k.Engine.pool else "dve"
    s.rng_state[name][lanes(op.src)] = rows(s.read(op.src)).astype(np.uint32)


def run_set_seed(s: State, op: kr.SetRngSeed) -> None:
    raw = np.ascontiguousarray(s.read(op.src)).reshape(-1)[:1]
    s.rng_state["dve"] = rng.seeded(int(raw.view(np.uint32)[0]))


def run_device_print(s: State, op: kr.DevicePrint) -> None:
    values = s.read(op.src)
    tensor = k.access_tensor(op.src)
    where = "" if op.pos is None else f"{op.pos.filename or '<kernel>'}:{op.pos.line}: "
    stream = sys.stderr if op.buffer == kr.PrintOutputBuffer.stderr else sys.stdout
    stream.write(f"{where}{op.print_prefix} {tensor.name} {list(values.shape)} {values.dtype}\n"
                 f"{np.array2string(np.asarray(values), threshold=sys.maxsize)}\n")
    stream.flush()


RUNNERS: dict[type[Any], Callable[[State, Any], None]] = {
    kr.Rng: run_rng, kr.Rand2: run_rand2, kr.Dropout: run_dropout, kr.RandGetState: run_get_state,
    kr.RandSetState: run_set_state, kr.SetRngSeed: run_set_seed, kr.DevicePrint: run_device_print,
}
