"""Builders of the asynchronous pairs and of tokens: `<collective>-start` / `-done`,
`copy-start` / `-done`, the generic `async-start` / `-update` / `-done`, and after-all.

Contract: a start's value is the tuple its shape describes, and the done takes the result
out of it (the interpreter runs the operation at the start: nothing else can observe when
it happens). Shapes, as XLA's verifier fixes them:
- all-reduce-start: the all-reduce's own shape; its done is the identity;
- all-gather-start: (operand(s), result(s)); collective-permute-start: (operand, result,
  u32[], u32[]) (more u32 context elements allowed); copy-start: (result, operand, u32[]);
  the done takes element 1 (copy-done: element 0);
- async-start: ((operands...), result, state...): the wrapped computation runs at the
  start, the state elements are zeros; async-update is the identity, async-done takes
  element 1.
- after-all (and a token operand or parameter) is a token, the value TOKEN_LANES makes: an
  empty per-lane array, so a token passes through tuples, calls and loops as any value.
The collectives themselves are collective_steps' (an `-start` runs the builder of its
synchronous opcode on a detached copy of the instruction with the result shape).
"""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp import collective_steps as k
from tilecc.hlo.interp.values import (Builder, Lanes, Operands, Runner, Step, Value,
                                      called_computation, detached_copy)
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import Shape, numpy_dtype


def token_lanes(count: int) -> np.ndarray:
    """The value of a token on `count` lanes: no data, one empty row per lane."""
    return np.zeros((count, 0), np.bool_)


def zeros_of(shape: Shape, count: int) -> Value:
    """Zeros of `shape` on `count` lanes (a token: token_lanes), tuples nested."""
    if shape.is_tuple:
        return tuple(zeros_of(s, count) for s in shape.tuple_shapes)
    if not shape.is_array:
        return token_lanes(count)
    return np.zeros((count,) + shape.dims, numpy_dtype(shape.element_type))


def after_all_step(runner: Runner, inst: HloInstruction) -> Step:
    return lambda a, d: token_lanes(d.count)


def _element(inst: HloInstruction, index: int) -> Shape:
    shape = inst.shape
    if not shape.is_tuple or len(shape.tuple_shapes) <= index:
        raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} of shape {shape} has no "
                          f"element {index}")
    return shape.tuple_shapes[index]


def all_gather_start_step(runner: Runner, inst: HloInstruction) -> Step:
    gather = k.all_gather_step(runner, detached_copy(inst, Op.ALL_GATHER, _element(inst, 1)))

    def step(a: Operands, d: Lanes) -> Value:
        operand = a[0] if len(a) == 1 else tuple(a)
        return (operand, gather(a, d))
    return step


def collective_permute_start_step(runner: Runner, inst: HloInstruction) -> Step:
    permute = k.collective_permute_step(
        runner, detached_copy(inst, Op.COLLECTIVE_PERMUTE, _element(inst, 1)))
    context = inst.shape.tuple_shapes[2:]

    def step(a: Operands, d: Lanes) -> Value:
        return (a[0], permute(a, d), *(zeros_of(s, d.count) for s in context))
    return step


def copy_start_step(runner: Runner, inst: HloInstruction) -> Step:
    context = _element(inst, 2)
    return lambda a, d: (a[0], a[0], zeros_of(context, d.count))


def async_start_step(runner: Runner, inst: HloInstruction) -> Step:
    comp = called_computation(inst)
    _element(inst, 1)
    state = inst.shape.tuple_shapes[2:]

    def step(a: Operands, d: Lanes) -> Value:
        return (tuple(a), runner.run(comp, a, d), *(zeros_of(s, d.count) for s in state))
    return step


def element_step(index: int) -> Builder:
    """The builder of a done: element `index` of its start's value."""
    def build(runner: Runner, inst: HloInstruction) -> Step:
        def step(a: Operands, d: Lanes) -> Value:
            value = a[0]
            if not isinstance(value, tuple) or len(value) <= index:
                raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} of a value that is "
                                  f"not its start's tuple")
            return value[index]
        return step
    return build
