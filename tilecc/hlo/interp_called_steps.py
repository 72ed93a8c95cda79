"""Compiled steps of the opcodes that call computations (call / fusion, reduce,
reduce-window, sort, map, while, conditional); the Interpreter mixes CalledSteps in.

Contract: each builder takes an instruction and returns its Step (see interp_values). A
called computation runs through the Interpreter's `run`, on the devices' lanes (call,
while, conditional: every lane keeps the result its own predicate selects) or on flat
scalar lanes (the reducer of reduce / reduce-window / sort / map, through `_lane_combiner`).
A reducer XLA recognises (`reducer_opcode`) folds with numpy instead of running the
computation; reduce inits follow interp_reduce (XLA CPU's rule for non-identity inits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo import interp_elementwise as ew
from tilecc.hlo.interp_reduce import (TREE_REDUCTION_WINDOW, generic_reduce, parse_window,
                                      reduce_with_init, reducer_opcode, window_dilations,
                                      window_view)
from tilecc.hlo.interp_sort import sort_values
from tilecc.hlo.interp_values import (Array, Lanes, Step, Value, leaves, select_lanes,
                                      single_or_tuple)
from tilecc.hlo.ir import HloComputation, HloInstruction


class CalledSteps:
    """Builders for the instructions that call computations."""

    if TYPE_CHECKING:  # provided by the Interpreter
        def run(self, comp: HloComputation, args: Sequence[Value], lanes: Lanes) -> Value: ...

    def _lane_combiner(self, comp: HloComputation) -> Callable[[list[Array], list[Array]],
                                                               list[Array]]:
        """combine(accumulators, elements) evaluating `comp` on flat lanes."""
        def combine(acc: list[Array], elements: list[Array]) -> list[Array]:
            args = list(acc) + list(elements)
            result = self.run(comp, args, Lanes(int(args[0].shape[0]), None))
            return leaves(result)
        return combine

    def _called(self, inst: HloInstruction) -> HloComputation:
        comp = inst.to_apply or (inst.calls[0] if inst.calls else None)
        if comp is None:
            raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} names no computation")
        return comp

    def _call(self, inst: HloInstruction) -> Step:
        comp = self._called(inst)
        return lambda a, d: self.run(comp, a, d)

    def _reduce(self, inst: HloInstruction) -> Step:
        half = len(inst.operands) // 2
        axes = tuple(1 + dim for dim in inst.dimensions or ())
        comp = self._called(inst)
        t = inst.operands[0].shape.element_type
        ew.check_supported_type(t, f"{inst.name} (reduce)")
        if half == 1 and (opcode := reducer_opcode(comp)) is not None:
            return lambda a, d: reduce_with_init(opcode, t, a[0], a[1],  # type: ignore[arg-type]
                                                 axes, TREE_REDUCTION_WINDOW)
        combine = self._lane_combiner(comp)

        def step(a: list[Value], d: Lanes) -> Value:
            results = generic_reduce(list(a[:half]), list(a[half:]),  # type: ignore[arg-type]
                                     axes, combine)
            return results[0] if half == 1 else tuple(results)
        return step

    def _reduce_window(self, inst: HloInstruction) -> Step:
        # operands: N arrays then N init values; N > 1 (variadic, e.g. XLA CPU's max-pool
        # with its argmax) goes through the generic reducer and yields a tuple
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
        axes = tuple(range(1 + rank, 1 + 2 * rank))
        opcode = reducer_opcode(self._called(inst)) if count == 1 else None
        combine = self._lane_combiner(self._called(inst))

        def step(a: list[Value], d: Lanes) -> Value:
            xs, inits = a[:count], a[count:]
            views = [window_view(x, init, sizes, strides, pads, base,  # type: ignore[arg-type]
                                 dilation) for x, init in zip(xs, inits)]
            if opcode is not None:
                return reduce_with_init(opcode, t, views[0], inits[0], axes)  # type: ignore[arg-type]
            out = generic_reduce(views, list(inits), axes, combine)  # type: ignore[arg-type]
            return out[0] if count == 1 else tuple(out)
        return step

    def _sort(self, inst: HloInstruction) -> Step:
        combine = self._lane_combiner(self._called(inst))
        dim = (inst.dimensions or (0,))[0]

        def step(a: list[Value], d: Lanes) -> Value:
            out = sort_values(list(a), dim,  # type: ignore[arg-type]
                              lambda pairs: combine(pairs, [])[0])
            return single_or_tuple(inst, list(out))
        return step

    def _map(self, inst: HloInstruction) -> Step:
        combine = self._lane_combiner(self._called(inst))

        def step(a: list[Value], d: Lanes) -> Value:
            shape = a[0].shape  # type: ignore[union-attr]
            flat = [np.ascontiguousarray(x).reshape(-1) for x in a]
            return combine(flat, [])[0].reshape(shape)
        return step

    def _while(self, inst: HloInstruction) -> Step:
        condition, body = inst.condition, inst.body
        if condition is None or body is None:
            raise InterpError(f"{inst.name}: while needs condition= and body=")

        def step(a: list[Value], d: Lanes) -> Value:
            state = a[0]
            active = np.asarray(self.run(condition, [state], d)).astype(bool)
            while active.any():
                state = select_lanes(active, self.run(body, [state], d), state)
                active = active & np.asarray(self.run(condition, [state], d)).astype(bool)
            return state
        return step

    def _conditional(self, inst: HloInstruction) -> Step:
        branches = inst.branch_computations or []
        if not branches or len(inst.operands) != len(branches) + 1:
            raise InterpError(f"{inst.name}: conditional needs one operand per branch")

        def step(a: list[Value], d: Lanes) -> Value:
            selector = np.asarray(a[0])
            if selector.dtype == np.bool_:  # pred form: true -> branch 0, false -> branch 1
                index = np.where(selector, 0, 1)
            else:  # an out-of-range index runs the last branch (XLA's rule)
                index = np.where((selector < 0) | (selector >= len(branches)),
                                 len(branches) - 1, selector)
            result: Value | None = None
            for k in sorted(set(index.tolist())):
                value = self.run(branches[k], [a[1 + k]], d)
                result = value if result is None else select_lanes(index == k, value, result)
            assert result is not None
            return result
        return step
