"""Values of the interpreter, the step and builder types, and entry input checks.

Contract: a Value is a numpy array whose axis 0 is the lane axis, or a tuple of Values (an
HLO tuple). `Lanes` describes that axis for a running computation. A Step is one compiled
instruction; a Builder makes the Step of an instruction from the `Runner` compiling it
(the only thing a builder may ask of the interpreter: its device counts and `run`).
`lane_combiner` runs a reducer computation on flat scalar lanes. `check_input` accepts an
entry input only with the parameter's exact dtype and (devices, *dims) shape (a tuple
parameter: a tuple of such, nested as its shape).

Buffer reuse: `dead_array(a, k)` says whether operand k of a step is an array that nothing
but the step's operand list references (CPython's reference count is the proof: every
holder -- a slot, a tuple, a view's base, a cache, the caller's list -- counts), so the step
may overwrite it with its result: no one can observe the old value. The interpreter empties
each slot at its last use so that a dead value is seen as such (interpreter.Program).
`Recycler` hands a step its previous result buffer again once that is dead.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, Union

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.ir import HloComputation, HloInstruction
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.types import Shape, numpy_dtype

Array = np.ndarray
Value = Union[Array, tuple["Value", ...]]


@dataclass(frozen=True, slots=True)
class Lanes:
    """The lane axis of a running computation: `count` lanes; `device_ids[lane]` is the
    lane's device, or None when the lanes are scalar elements of a reducer."""

    count: int
    device_ids: Array | None


Operands = list[Any]
"""The operand values of a step, typed Any: which of them are arrays and which tuples is
fixed by the instruction's (verified) shapes when the step is built, so a step uses them
without a check per run."""

Step = Callable[[Operands, Lanes], Value]
"""One compiled instruction: (operand values, lanes) -> its value."""

LaneCombiner = Callable[[list[Array], list[Array]], list[Array]]
"""combine(accumulators, elements) -> new accumulators, one array of flat lanes each."""


class Runner(Protocol):
    """What a Builder may ask of the interpreter that compiles the instruction."""

    replicas: int
    partitions: int

    def run(self, comp: HloComputation, args: list[Value], lanes: Lanes) -> Value:
        """`comp` on `lanes`; `args` is taken over (the caller must not use the list after)."""


Builder = Callable[[Runner, HloInstruction], Step]
"""builder(runner, instruction) -> the instruction's Step (raising InterpError when the
instruction cannot run; the interpreter defers that error to the step's first run)."""


DEAD_ARRAY_BYTES = 1 << 16
"""Smaller arrays are not reused: numpy allocates them from its cache about as fast as the
check costs."""


def dead_array(a: Operands, k: int) -> bool:
    """Whether `a[k]` is an array owning its writable memory that nothing but the list `a`
    references (the module contract); arrays under DEAD_ARRAY_BYTES count as alive."""
    x = a[k]
    # 3 references: the list, `x`, getrefcount's argument
    return type(x) is np.ndarray and x.base is None and x.nbytes >= DEAD_ARRAY_BYTES \
        and x.flags.writeable and sys.getrefcount(x) == 3


class Recycler:
    """A step's result buffers: `take(shape, dtype)` returns the previous one when nothing
    outside the recycler references it any more (its value is dead), else a new one."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last: Array | None = None

    def take(self, shape: tuple[int, ...], dtype: np.dtype) -> Array:
        if math.prod(shape) * dtype.itemsize < DEAD_ARRAY_BYTES:
            return np.empty(shape, dtype)
        last = self.last
        # 3 references: the attribute, `last`, getrefcount's argument
        if last is not None and last.shape == shape and last.dtype == dtype and \
                sys.getrefcount(last) == 3:
            return last
        out = self.last = np.empty(shape, dtype)
        return out


def detached_copy(inst: HloInstruction, opcode: HloOpcode, shape: Shape,
                  operands: list[HloInstruction] | None = None) -> HloInstruction:
    """`inst` as `opcode` with `shape` (and `operands`, by default its own), for a builder to
    compile in its place: the copy is in no computation and no operand's user, so the module
    does not change; it keeps `inst`'s name (an error names the instruction of the module)
    and the attributes collectives and elementwise ops read."""
    copy = HloInstruction(inst.name, opcode, shape,
                          list(inst.operands) if operands is None else operands)
    copy.to_apply, copy.dimensions, copy.replica_groups = inst.to_apply, inst.dimensions, \
        inst.replica_groups
    copy.channel_id, copy.use_global_device_ids, copy.attributes = inst.channel_id, \
        inst.use_global_device_ids, inst.attributes
    return copy


def called_computation(inst: HloInstruction) -> HloComputation:
    """The computation `inst` applies (to_apply=, else the first of calls=)."""
    comp = inst.to_apply or (inst.calls[0] if inst.calls else None)
    if comp is None:
        raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} names no computation")
    return comp


def lane_combiner(runner: Runner, comp: HloComputation) -> LaneCombiner:
    """combine(accumulators, elements) evaluating `comp` on flat scalar lanes."""
    def combine(acc: list[Array], elements: list[Array]) -> list[Array]:
        args: list[Value] = [*acc, *elements]
        return leaves(runner.run(comp, args, Lanes(int((acc or elements)[0].shape[0]), None)))
    return combine


def single_or_tuple(inst: HloInstruction, outs: Sequence[Value]) -> Value:
    """The value of an instruction with one result per operand: a tuple when its shape is."""
    return outs[0] if len(outs) == 1 and not inst.shape.is_tuple else tuple(outs)


def check_input(param: HloInstruction, x: Any, devices: int) -> Value:
    """`x` if it fits `param` on `devices` devices, else InterpError saying what fits: an
    array for an array parameter, a tuple of such (nested as the shape is) for a tuple."""
    return _check_value(param, param.shape, x, devices, "")


def _check_value(param: HloInstruction, shape: Shape, x: Any, devices: int,
                 index: str) -> Value:
    where = f"parameter {param.parameter_number} ({param.name}{index}: {shape})"
    if shape.is_tuple:
        if not isinstance(x, (tuple, list)) or len(x) != len(shape.tuple_shapes):
            raise InterpError(f"input for {where} must be a tuple of "
                              f"{len(shape.tuple_shapes)} values")
        return tuple(_check_value(param, s, v, devices, f"{index}[{k}]")
                     for k, (s, v) in enumerate(zip(shape.tuple_shapes, x)))
    if not shape.is_array and not shape.is_token:
        raise InterpError(f"{where}: only array and token parameters (or tuples of them) "
                          "can be given inputs")
    x = np.asarray(x)
    # a token is an empty pred row per device (interp.async_steps.token_lanes)
    want = (devices,) + shape.dims if shape.is_array else (devices, 0)
    dtype = numpy_dtype(shape.element_type) if shape.is_array else np.dtype(np.bool_)
    if x.shape != want or x.dtype != dtype:
        raise InterpError(f"input for {where} must be {dtype}{list(want)} (leading device "
                          f"axis), got {x.dtype}{list(x.shape)}")
    return x


def leaves(value: Value) -> list[Array]:
    """The arrays of a value, tuples flattened depth-first (XLA's output order)."""
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


def select_lanes(mask: Array, on_true: Value, on_false: Value) -> Value:
    """Per lane, `on_true` where mask else `on_false` (recursively through tuples). A mask
    that is all true or all false returns that side itself, uncopied (a while loop whose
    lanes all run costs no per-iteration copy of its state)."""
    if mask.all():
        return on_true
    if not mask.any():
        return on_false
    if isinstance(on_true, tuple):
        assert isinstance(on_false, tuple)
        return tuple(select_lanes(mask, a, b) for a, b in zip(on_true, on_false))
    return np.where(mask.reshape(mask.shape + (1,) * (on_true.ndim - 1)), on_true, on_false)
