"""Values of the interpreter: the lane axis, tuples of arrays, and entry input checks.

Contract: a Value is a numpy array whose axis 0 is the lane axis, or a tuple of Values (an
HLO tuple). `Lanes` describes that axis for a running computation. `check_input` accepts
an entry input only with the parameter's exact dtype and (devices, *dims) shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence, Union

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.types import numpy_dtype

Array = np.ndarray
Value = Union[Array, tuple["Value", ...]]


@dataclass(frozen=True, slots=True)
class Lanes:
    """The lane axis of a running computation: `count` lanes; `device_ids[lane]` is the
    lane's device, or None when the lanes are scalar elements of a reducer."""

    count: int
    device_ids: Array | None


Step = Callable[[list[Value], Lanes], Value]
"""One compiled instruction: (operand values, lanes) -> its value."""


def single_or_tuple(inst: HloInstruction, outs: Sequence[Value]) -> Value:
    """The value of an instruction with one result per operand: a tuple when its shape is."""
    return outs[0] if len(outs) == 1 and not inst.shape.is_tuple else tuple(outs)


def check_input(param: HloInstruction, x: np.ndarray, devices: int) -> Array:
    """`x` if it fits `param` on `devices` devices, else InterpError saying what fits."""
    shape = param.shape
    if not shape.is_array:
        raise InterpError(f"parameter {param.name} has shape {shape}; only array "
                          "parameters can be given inputs")
    want = (devices,) + shape.dims
    dtype = numpy_dtype(shape.element_type)
    if x.shape != want or x.dtype != dtype:
        raise InterpError(f"input for parameter {param.parameter_number} ({param.name}: "
                          f"{shape}) must be {dtype}{list(want)} (leading device axis), got "
                          f"{x.dtype}{list(x.shape)}")
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
