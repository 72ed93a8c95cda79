"""Operands of simulated instructions: reading and writing access patterns, scalar slots,
ALU stages and the accumulator registers.

Contract: `read` / `write` go through the machine's checked views (`write` converts to the
destination dtype, sim/dtypes.py, and accepts any array of the destination's element
count), which also carry the definedness shadow (tilecc/definedness.py): an executor that
reads and writes only through these helpers gets the default rule; `write(...,
undefined=mask)` declares its own, `read_undefined` gives an operand's undefined mask, and
`read_index` reads values used as indices or branch conditions, which must be defined.
`read_registers` / `write_registers` are the accumulator registers' access with their
shadow; a scalar slot is an Immediate (float32 or int32) or a [P,1] tile that broadcasts
along the free axes of its partition; `stage` applies one ALU op with the reverse flag
swapping its ports, always giving the data's shape; `write_stage` / `write_stages` compute
an instruction's last one or two stages straight into a float32 destination when they can
(single ufuncs, no operand read after the destination is written overlapping it), with the
values of the staged form. `accumulate` applies an
EngineAccumulationType to an engine's registers (one float32 per partition lane, the
physical partitions of the instruction's output): Idle leaves them, Zero sets the op's
identity, ZeroAccumulate = identity op rows, Accumulate / AddAccumulate = registers op
rows, LoadAccumulate = init op rows (without an init operand: registers op rows).
"""

from __future__ import annotations

import math

import numpy as np

from tilecc.bir.enums import EngineAccumulationType as Acc, MemoryKind
from tilecc.bir.inst import AccessPattern, Argument, Immediate
from tilecc.errors import SimError
from tilecc.sim.alu import (AluEntry, apply_alu, apply_alu_into, broadcasts_to, fold_rows,
                            to_f32)
from tilecc.definedness import first_index
from tilecc.sim.dtypes import convert, numpy_dtype
from tilecc.sim.machine import PARTITIONS, Machine

F32 = np.float32
F32_DTYPE = np.dtype(F32)
Value = np.ndarray


def read(m: Machine, arg: Argument, what: str, dma: bool = False) -> Value:
    if isinstance(arg, Immediate):
        raise SimError(f"{what} must be a tensor access, got an immediate")
    return m.view(arg, write=False, dma=dma)


def read_undefined(m: Machine, arg: Argument) -> Value:
    """Which elements of operand `arg` are undefined (an immediate: none)."""
    if isinstance(arg, Immediate):
        return np.zeros((), bool)
    return m.undefined(arg)


def read_index(m: Machine, arg: Argument, what: str) -> Value:
    """Values used as an index or a branch condition: undefined ones are reported (the
    uninit policy), naming the element."""
    values = read(m, arg, what)
    if isinstance(arg, AccessPattern) and (undefined := m.undefined(arg)).any():
        element = m.element(arg, first_index(undefined))
        origin = m.origins.get(arg.memref)
        m.report(f"undefined data used as {what}: {arg.memref!r} element {list(element)}"
                 + (f"; {origin.text()}" if origin is not None else " was never written"))
    return values


def read_registers(m: Machine, regs: Value, lane: slice) -> Value:
    """Accumulator registers (m.act_acc / m.dve_acc) of `lane`, read with their shadow."""
    return m.read_registers(regs, lane)


def write_registers(m: Machine, regs: Value, lane: slice, values: Value) -> None:
    """Set accumulator registers of `lane`; their shadow follows the instruction's reads."""
    m.write_registers(regs, lane, values)


def write(m: Machine, ap: AccessPattern, values: Value, dma: bool = False,
          undefined: Value | None = None) -> None:
    """Convert `values` to the AP's dtype and store them (same shape, or same element count);
    `undefined` (the output's shape) replaces the default definedness rule for this output."""
    view = m.view(ap, write=True, dma=dma, whole=True)
    if type(values) is not np.ndarray:
        values = np.asarray(values)
    if values.shape != view.shape:
        if values.size != view.size:
            raise SimError(f"writes {values.shape} values through a {view.shape} access "
                           f"to {ap.memref!r}")
        values = values.reshape(view.shape)
    view[...] = values if values.dtype is view.dtype else convert(values, view.dtype)
    if undefined is not None:
        m.declare(ap, np.asarray(undefined, bool).reshape(view.shape) if np.ndim(undefined) else undefined)


def write_stage(m: Machine, ap: AccessPattern, entry: AluEntry, data: Value,
                operand: Value | np.generic, reverse: bool) -> None:
    """The last ALU stage of an instruction, computed into its destination when it can."""
    x, y = (operand, data) if reverse else (data, operand)
    if not apply_alu_into(entry, x, y, m.view(ap, write=True, whole=True)):
        write(m, ap, stage(entry, data, operand, reverse))


def apart(arg: Argument, value: Value | np.generic, dst: AccessPattern, view: Value) -> bool:
    """Operand `arg` (read as `value`) cannot overlap destination `dst` (its `view`): an
    immediate, another location (locations that one instruction names never share bytes:
    sim/placement.py), or bytes numpy finds apart."""
    return (not isinstance(arg, AccessPattern) or arg.memref != dst.memref
            or not np.may_share_memory(value, view))


def write_stages(m: Machine, ap: AccessPattern, data: Value, op0: AluEntry,
                 s0: Value | np.generic, reverse0: bool, op1: AluEntry,
                 s1: Value | np.generic, reverse1: bool, s1_arg: Argument) -> None:
    """`(data op0 s0) op1 s1` into the destination: both stages in place in a float32
    destination when they are single ufuncs giving its shape and `s1` (read from
    `s1_arg`) does not overlap it (a temporary of a large tile costs more than the
    arithmetic: fresh pages), else the first stage into a temporary and the last through
    `write_stage`. Same values either way."""
    view = m.view(ap, write=True, whole=True)
    f0, f1 = op0.inplace, op1.inplace
    if (f0 is not None and f1 is not None and view.dtype is F32_DTYPE
            and data.shape == view.shape and apart(s1_arg, s1, ap, view)):
        a0, b0 = to_f32(s0), to_f32(s1)
        x = data if data.dtype is F32_DTYPE else to_f32(data)
        shape = view.shape
        if ((not a0.shape or broadcasts_to(x.shape, a0.shape, shape))
                and (not b0.shape or b0.shape == shape or broadcasts_to(shape, b0.shape, shape))):
            if reverse0:
                f0(a0, x, out=view)
            else:
                f0(x, a0, out=view)
            if reverse1:
                f1(b0, view, out=view)
            else:
                f1(view, b0, out=view)
            return
    write_stage(m, ap, op1, stage(op0, data, s0, reverse0), s1, reverse1)


def _frozen(value: np.float32) -> Value:
    array = np.array(value)
    array.flags.writeable = False
    return array


# float32 immediates as read-only 0-d arrays, by value: np.float32(x) costs as much as a
# small ufunc and a ufunc takes a 0-d array faster than a numpy scalar (~0.7 us less under
# load); bounded (cleared when full). Zeros by sign: a key 0.0 would also answer -0.0.
_F32_BY_VALUE: dict[float, Value] = {}
_F32_CACHE_SIZE = 4096
_ZEROS = (_frozen(F32(0.0)), _frozen(F32(-0.0)))


def f32_immediate(value: float) -> Value:
    """np.float32(value) as a read-only 0-d float32 array (NaN is converted each time:
    it never equals a key)."""
    if (hit := _F32_BY_VALUE.get(value)) is not None:
        return hit
    if value == 0:
        return _ZEROS[math.copysign(1.0, value) < 0]
    converted = _frozen(F32(value))
    if value == value:
        if len(_F32_BY_VALUE) >= _F32_CACHE_SIZE:
            _F32_BY_VALUE.clear()
        _F32_BY_VALUE[value] = converted
    return converted


def scalar(m: Machine, arg: Argument, data: Value) -> Value | np.generic:
    """A scalar slot: an immediate, or a [P,1] tile broadcast along `data`'s free axes."""
    if isinstance(arg, Immediate):
        value = arg.value
        if isinstance(value, float) or numpy_dtype(arg.dtype).kind == "f":
            return f32_immediate(value)
        return np.int32(value)
    tile = m.view(arg, write=False)
    parts = data.shape[0]
    if tile.size != parts:
        raise SimError(f"scalar operand {arg.memref!r} has shape {tile.shape}; "
                       f"expected [{parts}, 1]")
    if tile.ndim == data.ndim and tile.shape[0] == parts:   # [P, 1, ...] already
        return tile
    return tile.reshape((parts,) + (1,) * (data.ndim - 1))


def stage(entry: AluEntry, data: Value, operand: Value | np.generic, reverse: bool) -> Value:
    """One ALU stage over `data`'s shape (a reversed bypass passes the operand, broadcast)."""
    result = apply_alu(entry, operand, data) if reverse else apply_alu(entry, data, operand)
    if result.shape != data.shape:
        result = np.broadcast_to(result, data.shape)
    return result


def lanes(m: Machine, ap: AccessPattern) -> slice:
    """The physical partitions (accumulator lanes) an access covers."""
    pl = m.placement(ap.memref)
    start = 0 if pl.loc.kind == MemoryKind.HBM else ap.offset // pl.row
    if start + ap.ap[0][1] > PARTITIONS:   # before the registers are touched (machine.view
        # checks the access itself when the instruction writes it)
        raise SimError(f"access of {ap.memref!r} at offset {ap.offset} covers partitions "
                       f"{start}..{start + ap.ap[0][1] - 1}, past the {PARTITIONS} "
                       f"accumulator lanes")
    return slice(start, start + ap.ap[0][1])


def rows_of(values: Value) -> Value:
    return values.reshape(values.shape[0], -1)


def accumulate(m: Machine, regs: Value, lane: slice, cmd: Acc, entry: AluEntry, rows: Value,
               init: Value | np.generic | None = None) -> None:
    """Update `regs[lane]` with the row folds of `rows` per the accumulate command."""
    if cmd == Acc.Idle:
        return
    identity = np.full(rows.shape[0], entry.identity, F32)
    if cmd == Acc.Zero:
        result = identity
    elif cmd == Acc.ZeroAccumulate:
        result = fold_rows(entry, identity, rows)
    elif cmd == Acc.LoadAccumulate and init is not None:
        start = np.broadcast_to(to_f32(init).reshape(-1), (rows.shape[0],))
        result = fold_rows(entry, start, rows)
    else:  # Accumulate, AddAccumulate; LoadAccumulate without an init operand
        result = fold_rows(entry, read_registers(m, regs, lane), rows)
    write_registers(m, regs, lane, result)
