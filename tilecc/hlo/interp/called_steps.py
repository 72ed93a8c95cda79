"""Builders of the opcodes that call computations: call / fusion, reduce, reduce-window,
sort, map, while, conditional.

Contract: each builder is a `Builder` (see values): (runner, instruction) -> Step. A called
computation runs through `runner.run`, on the devices' lanes (call, while, conditional:
every lane keeps the result its own predicate selects) or on flat scalar lanes (the reducer
of reduce / reduce-window / sort / map, through values.lane_combiner). A reducer XLA
recognises (`reducer_opcode`) folds with numpy instead of running the computation; reduce
inits follow reduce.py (XLA CPU's rule for non-identity inits), reduce-window follows
reduce_window.py (the init once per output, padding and base-dilation holes skipped).
"""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp import elementwise as ew
from tilecc.hlo.interp.reduce import (TREE_REDUCTION_WINDOW, parse_window,
                                      reduce_with_init, reducer_opcode, window_dilations)
from tilecc.hlo.interp.reduce_order import generic_reduce
from tilecc.hlo.interp.reduce_window import WindowGeometry, reduce_window
from tilecc.hlo.interp.sort import sort_values
from tilecc.hlo.interp.values import (Array, Lanes, Operands, Runner, Step, Value,
                                      called_computation, lane_combiner, select_lanes,
                                      single_or_tuple)
from tilecc.hlo.ir import HloInstruction


def call_step(runner: Runner, inst: HloInstruction) -> Step:
    """call and fusion: the called computation on the caller's lanes."""
    comp = called_computation(inst)
    return lambda a, d: runner.run(comp, a, d)


def reduce_step(runner: Runner, inst: HloInstruction) -> Step:
    half = len(inst.operands) // 2
    axes = tuple(1 + dim for dim in inst.dimensions or ())
    comp = called_computation(inst)
    t = inst.operands[0].shape.element_type
    ew.check_supported_type(t, f"{inst.name} (reduce)")
    if half == 1 and (opcode := reducer_opcode(comp)) is not None:
        return lambda a, d: reduce_with_init(opcode, t, a[0], a[1], axes,
                                             TREE_REDUCTION_WINDOW)
    combine = lane_combiner(runner, comp)

    def step(a: Operands, d: Lanes) -> Value:
        results = generic_reduce(list(a[:half]), list(a[half:]), axes, combine)
        return results[0] if half == 1 else tuple(results)
    return step


def reduce_window_step(runner: Runner, inst: HloInstruction) -> Step:
    # operands: N arrays then N init values; N > 1 (variadic, e.g. XLA CPU's max-pool
    # with its argmax) yields a tuple
    count = len(inst.operands) // 2
    if count < 1 or len(inst.operands) != 2 * count:
        raise InterpError(f"{inst.name}: reduce-window takes arrays and as many init "
                          f"values, got {len(inst.operands)} operands")
    for operand in inst.operands[:count]:
        ew.check_supported_type(operand.shape.element_type, f"{inst.name} (reduce-window)")
    t = inst.operands[0].shape.element_type
    rank = inst.operands[0].shape.rank
    window = inst.attributes.get("window")
    sizes, strides, pads = parse_window(window, rank, inst.name, dilations=True)
    base, dilation = window_dilations(window or "", rank)
    geometry = WindowGeometry(tuple(sizes), tuple(strides), tuple(pads), tuple(base),
                              tuple(dilation))
    comp = called_computation(inst)
    combine = lane_combiner(runner, comp)
    if count == 1 and (opcode := reducer_opcode(comp)) is not None:
        op = ew.binary_op(opcode, t)  # the reducer's own elementwise op, without a call

        def standard(acc: list[Array], elements: list[Array]) -> list[Array]:
            return [op(acc[0], elements[0])]
        combine = standard

    def step(a: Operands, d: Lanes) -> Value:
        out = reduce_window(list(a[:count]), list(a[count:]), geometry, combine)
        return out[0] if count == 1 else tuple(out)
    return step


def sort_step(runner: Runner, inst: HloInstruction) -> Step:
    comp = called_computation(inst)
    combine = lane_combiner(runner, comp)
    dim = (inst.dimensions or (0,))[0]
    is_stable = inst.attributes.get("is_stable") == "true"
    compared = frozenset(k // 2 for k, p in enumerate(comp.parameters)
                         if p.users or p is comp.root)

    def step(a: Operands, d: Lanes) -> Value:
        try:
            out = sort_values(list(a), dim, lambda pairs: combine(pairs, [])[0], is_stable,
                              compared)
        except InterpError as err:
            raise InterpError(f"{inst.name}: {err}") from None
        return single_or_tuple(inst, list(out))
    return step


def map_step(runner: Runner, inst: HloInstruction) -> Step:
    combine = lane_combiner(runner, called_computation(inst))

    def step(a: Operands, d: Lanes) -> Value:
        shape = a[0].shape
        flat = [np.ascontiguousarray(x).reshape(-1) for x in a]
        return combine(flat, [])[0].reshape(shape)
    return step


def while_step(runner: Runner, inst: HloInstruction) -> Step:
    condition, body = inst.condition, inst.body
    if condition is None or body is None:
        raise InterpError(f"{inst.name}: while needs condition= and body=")

    def predicate(state: Value, d: Lanes) -> np.ndarray:
        return np.asarray(runner.run(condition, [state], d)).astype(bool, copy=False)

    def step(a: Operands, d: Lanes) -> Value:
        state = a.pop()  # held by `state` alone: a trip of every lane hands it to the body
        active = predicate(state, d)
        while True:  # one reduction of the lanes per trip while every lane runs
            if active.all():  # no lane keeps the old state: the body may reuse its buffers
                args = [state]
                del state
                state = runner.run(body, args, d)
                active = predicate(state, d)
            elif active.any():
                state = select_lanes(active, runner.run(body, [state], d), state)
                active = active & predicate(state, d)
            else:
                return state
    return step


def conditional_step(runner: Runner, inst: HloInstruction) -> Step:
    branches = inst.branch_computations or []
    if not branches or len(inst.operands) != len(branches) + 1:
        raise InterpError(f"{inst.name}: conditional needs one operand per branch")

    def step(a: Operands, d: Lanes) -> Value:
        selector = np.asarray(a[0])
        if selector.dtype == np.bool_:  # pred form: true -> branch 0, false -> branch 1
            index = np.where(selector, 0, 1)
        else:  # an out-of-range index runs the last branch (XLA's rule)
            index = np.where((selector < 0) | (selector >= len(branches)),
                             len(branches) - 1, selector)
        result: Value | None = None
        for k in sorted(set(index.tolist())):
            value = runner.run(branches[k], [a[1 + k]], d)
            result = value if result is None else select_lanes(index == k, value, result)
        assert result is not None
        return result
    return step
