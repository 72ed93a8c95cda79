"""A numpy interpreter for HLO modules, vectorized across replicas and partitions.

Contract:
- `evaluate_module(module, inputs, replicas, partitions=1)` runs the entry computation on
  D = replicas * partitions devices at once. `inputs` holds one array per entry parameter,
  shaped (D, *parameter dims) with the parameter's exact dtype; device
  d = replica * partitions + partition. The result is the root's value flattened (a tuple
  root gives its leaves in order, a non-tuple root one output), each shaped (D, *dims).
  Outputs are not copied: a value every device shares may be one read-only broadcast
  array, and a passed-through input is the caller's own array; copy before writing.
- Every value is an array whose axis 0 is the lane axis: the devices in the entry
  computation, or the flattened scalar lanes when a reducer computation (`to_apply` of
  reduce, all-reduce, map ...) runs on whole slices at once. No Python loop runs per element.
- Elementwise semantics are XLA's (interp_elementwise), data movement in interp_shapes,
  reductions in interp_reduce, sort in interp_sort, collectives with every group mode in
  interp_collectives.
- while / conditional evaluate on all lanes and keep, per lane, the result the lane's own
  predicate selects, so devices may take different branches or iteration counts.
- Anything outside the supported set (scatter, gather, custom-call, rng, replica-id
  inside a reducer, complex or sub-byte element types ...) raises InterpError naming the
  instruction and opcode, never a wrong answer.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo import interp_collectives as coll
from tilecc.hlo import interp_elementwise as ew
from tilecc.hlo import interp_shapes as shapes
from tilecc.hlo.interp_dot import dot
from tilecc.hlo.interp_sort import sort_values
from tilecc.hlo.interp_values import Array, Lanes, Value, check_input, leaves, select_lanes
from tilecc.hlo.interp_reduce import (collective_reduce, generic_reduce, parse_window,
                                      reduce_with_init, reducer_opcode, tree_reduce,
                                      window_view)
from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule
from tilecc.hlo.opcodes import ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, HloOpcode as Op
from tilecc.hlo.types import Shape, numpy_dtype


_CONVERSIONS = frozenset({Op.CONVERT, Op.BITCAST_CONVERT, Op.IS_FINITE})
_UNARY = (ELEMENTWISE_UNARY - _CONVERSIONS) | {Op.COPY}
_BINARY = ELEMENTWISE_BINARY - {Op.COMPARE}


def evaluate_module(module: HloModule, inputs: list[np.ndarray], replicas: int,
                    partitions: int = 1) -> list[np.ndarray]:
    """Run `module`'s entry on replicas * partitions devices; see the module contract."""
    if replicas < 1 or partitions < 1:
        raise InterpError(f"need at least one replica and partition, got replicas={replicas} "
                          f"partitions={partitions}")
    entry = module.entry
    if entry is None:
        raise InterpError(f"module {module.name} has no entry computation")
    devices = replicas * partitions
    params = entry.parameters
    if len(inputs) != len(params):
        raise InterpError(f"entry computation {entry.name} takes {len(params)} parameters, "
                          f"got {len(inputs)} inputs")
    args = [check_input(p, np.asarray(x), devices) for p, x in zip(params, inputs)]
    interpreter = Interpreter(module, replicas, partitions)
    with np.errstate(all="ignore"):
        result = interpreter.run(entry, args, Lanes(devices, np.arange(devices)))
    return leaves(result)


def _evaluation_order(comp: HloComputation) -> list[HloInstruction]:
    """The instructions with operands first: the text order when it already is (the usual
    case, checked in one pass), else a post-order walk."""
    order = comp.instructions
    seen: set[int] = set()
    for inst in order:
        if any(id(op) not in seen for op in inst.operands):
            return comp.post_order()
        seen.add(id(inst))
    return order


def _data_movement(fn: Callable[[HloInstruction, list[Array]], Array]) -> Handler:
    return lambda interp, inst, operands, lanes: fn(inst, operands)  # type: ignore[arg-type]


class Interpreter:
    """Evaluates computations of one module; see the module contract."""

    def __init__(self, module: HloModule, replicas: int, partitions: int) -> None:
        self.module = module
        self.replicas = replicas
        self.partitions = partitions
        self._orders: dict[int, list[HloInstruction]] = {}

    # ---- driving ----------------------------------------------------------------------

    def run(self, comp: HloComputation, args: list[Value], lanes: Lanes) -> Value:
        """Evaluate `comp` with every value carrying `lanes.count` lanes on axis 0."""
        order = self._orders.get(id(comp))
        if order is None:
            order = self._orders[id(comp)] = _evaluation_order(comp)
        if len(args) != len(comp.parameters):
            raise InterpError(f"computation {comp.name} takes {len(comp.parameters)} "
                              f"arguments, got {len(args)}")
        values: dict[int, Value] = {}
        for inst in order:
            if inst.opcode is Op.PARAMETER:
                values[id(inst)] = args[inst.parameter_number or 0]
                continue
            operands = [values[id(op)] for op in inst.operands]
            values[id(inst)] = self.evaluate(inst, operands, lanes)
        assert comp.root is not None
        return values[id(comp.root)]

    def evaluate(self, inst: HloInstruction, operands: list[Value], lanes: Lanes) -> Value:
        opcode = inst.opcode
        if opcode in _UNARY or opcode in _BINARY:
            t = inst.shape.element_type
            ew.check_supported_type(t, f"{inst.name} ({opcode.mnemonic})")
            if opcode in _UNARY:
                return ew.unary(opcode, t, operands[0])  # type: ignore[arg-type]
            return ew.binary(opcode, t, operands[0], operands[1])  # type: ignore[arg-type]
        handler = _HANDLERS.get(opcode)
        if handler is None:
            raise InterpError(f"{inst.name}: opcode {opcode.mnemonic} is not supported by "
                              "the interpreter")
        return handler(self, inst, operands, lanes)

    def _lane_combiner(self, comp: HloComputation) -> Callable[[list[Array], list[Array]],
                                                               list[Array]]:
        """combine(accumulators, elements) evaluating `comp` on flat lanes."""
        def combine(acc: list[Array], elements: list[Array]) -> list[Array]:
            args = list(acc) + list(elements)
            result = self.run(comp, args, Lanes(int(args[0].shape[0]), None))
            return leaves(result)
        return combine

    # ---- leaves -----------------------------------------------------------------------

    def _unreachable(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        raise AssertionError(f"{inst.name}: parameters are bound by run()")

    def _device_ids(self, inst: HloInstruction, lanes: Lanes) -> Array:
        if lanes.device_ids is None:
            raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} inside a computation "
                              "applied to scalar elements is not supported by the interpreter")
        return lanes.device_ids

    def _constant(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        literal = inst.literal
        if literal is None:
            raise InterpError(f"{inst.name}: constant without a value")
        return np.broadcast_to(literal, (d.count,) + literal.shape)

    def _iota(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        dims = inst.shape.dims
        return shapes.iota(d.count, dims, inst.iota_dimension or 0,
                           numpy_dtype(inst.shape.element_type))

    def _replica_id(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        return (self._device_ids(inst, d) // self.partitions).astype(np.uint32)

    def _partition_id(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        return (self._device_ids(inst, d) % self.partitions).astype(np.uint32)

    # ---- elementwise with special operands --------------------------------------------

    def _compare(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        t = inst.operands[0].shape.element_type
        ew.check_supported_type(t, f"{inst.name} (compare)")
        return ew.compare(inst.comparison_direction or "", inst.comparison_type, t,
                          a[0], a[1])  # type: ignore[arg-type]

    def _select(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        pred, on_true, on_false = a
        if isinstance(on_true, tuple):
            return select_lanes(pred, on_true, on_false)  # type: ignore[arg-type]
        return ew.select(pred, on_true, on_false)  # type: ignore[arg-type]

    def _clamp(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        t = inst.shape.element_type
        ew.check_supported_type(t, f"{inst.name} (clamp)")
        low, x, high = (np.broadcast_to(v, a[1].shape) for v in a)  # type: ignore[union-attr]
        return ew.clamp(t, low, x, high)

    def _convert(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        source = inst.operands[0].shape.element_type
        target = inst.shape.element_type
        ew.check_supported_type(source, f"{inst.name} (convert)")
        ew.check_supported_type(target, f"{inst.name} (convert)")
        return ew.convert(a[0], source, target)  # type: ignore[arg-type]

    def _bitcast_convert(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        x = np.ascontiguousarray(a[0])
        dtype = numpy_dtype(inst.shape.element_type)
        if dtype.itemsize != x.dtype.itemsize:
            raise InterpError(f"{inst.name}: bitcast-convert between types of different "
                              "widths is not supported by the interpreter")
        return x.view(dtype)

    def _is_finite(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        return ew.is_finite(inst.operands[0].shape.element_type, a[0])  # type: ignore[arg-type]

    # ---- tuples and computations ---------------------------------------------------

    def _get_tuple_element(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        value = a[0]
        if not isinstance(value, tuple) or inst.tuple_index is None:
            raise InterpError(f"{inst.name}: get-tuple-element of a non-tuple value")
        return value[inst.tuple_index]

    def _called(self, inst: HloInstruction) -> HloComputation:
        comp = inst.to_apply or (inst.calls[0] if inst.calls else None)
        if comp is None:
            raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} names no computation")
        return comp

    def _call(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        return self.run(self._called(inst), a, d)

    def _reduce(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        half = len(a) // 2
        xs, inits = list(a[:half]), list(a[half:])
        axes = tuple(1 + dim for dim in inst.dimensions or ())
        comp = self._called(inst)
        t = inst.operands[0].shape.element_type
        ew.check_supported_type(t, f"{inst.name} (reduce)")
        if half == 1 and (opcode := reducer_opcode(comp)) is not None:
            return reduce_with_init(opcode, t, xs[0], inits[0], axes)  # type: ignore[arg-type]
        results = generic_reduce(xs, inits, axes, self._lane_combiner(comp))  # type: ignore[arg-type]
        return results[0] if half == 1 else tuple(results)

    def _reduce_window(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        if len(a) != 2:
            raise InterpError(f"{inst.name}: variadic reduce-window is not supported by the "
                              "interpreter")
        x, init = a
        t = inst.operands[0].shape.element_type
        ew.check_supported_type(t, f"{inst.name} (reduce-window)")
        sizes, strides, pads = parse_window(inst.attributes.get("window"), inst.shape.rank,
                                            inst.name)
        view = window_view(x, init, sizes, strides, pads)  # type: ignore[arg-type]
        rank = inst.shape.rank
        axes = tuple(range(1 + rank, 1 + 2 * rank))
        if (opcode := reducer_opcode(self._called(inst))) is not None:
            return reduce_with_init(opcode, t, view, init, axes)  # type: ignore[arg-type]
        return generic_reduce([view], [init], axes, self._lane_combiner(self._called(inst)))[0]  # type: ignore[list-item]

    def _sort(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        combine = self._lane_combiner(self._called(inst))
        out = sort_values(list(a), (inst.dimensions or (0,))[0],  # type: ignore[arg-type]
                          lambda pairs: combine(pairs, [])[0])
        return out[0] if len(out) == 1 and not inst.shape.is_tuple else tuple(out)

    def _map(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        shape = a[0].shape  # type: ignore[union-attr]
        flat = [np.ascontiguousarray(x).reshape(-1) for x in a]  # type: ignore[union-attr]
        out = self._lane_combiner(self._called(inst))(flat, [])
        return out[0].reshape(shape)

    def _while(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        if inst.condition is None or inst.body is None:
            raise InterpError(f"{inst.name}: while needs condition= and body=")
        state = a[0]
        active = np.asarray(self.run(inst.condition, [state], d)).astype(bool)
        while active.any():
            state = select_lanes(active, self.run(inst.body, [state], d), state)
            active = active & np.asarray(self.run(inst.condition, [state], d)).astype(bool)
        return state

    def _conditional(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        branches = inst.branch_computations or []
        if not branches or len(a) != len(branches) + 1:
            raise InterpError(f"{inst.name}: conditional needs one operand per branch")
        selector = np.asarray(a[0])
        if selector.dtype == np.bool_:  # pred form: true -> branch 0, false -> branch 1
            index = np.where(selector, 0, 1)
        else:  # an out-of-range index runs the last branch (XLA's rule)
            index = np.where((selector < 0) | (selector >= len(branches)), len(branches) - 1,
                             selector)
        result: Value | None = None
        for k in sorted(set(index.tolist())):
            value = self.run(branches[k], [a[1 + k]], d)
            result = value if result is None else select_lanes(index == k, value, result)
        assert result is not None
        return result

    # ---- collectives ------------------------------------------------------------------

    def _groups(self, inst: HloInstruction, d: Lanes) -> list[list[int]]:
        self._device_ids(inst, d)
        return coll.device_groups(inst, self.replicas, self.partitions)

    def _group_reducer(self, inst: HloInstruction, t_shape: Shape
                       ) -> Callable[[Array], Array]:
        comp = self._called(inst)
        t = t_shape.element_type
        ew.check_supported_type(t, f"{inst.name} ({inst.opcode.mnemonic})")
        if (opcode := reducer_opcode(comp)) is not None:
            return lambda stack: collective_reduce(opcode, t, stack)
        combine = self._lane_combiner(comp)

        def reduce_group(stack: Array) -> Array:
            members = stack.shape[0]
            columns = np.moveaxis(stack, 0, -1).reshape(-1, members)
            return tree_reduce([columns], combine)[0].reshape(stack.shape[1:])
        return reduce_group

    def _all_reduce(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        groups = self._groups(inst, d)
        outs = [coll.all_reduce(x, groups, self._group_reducer(inst, op.shape))  # type: ignore[arg-type]
                for x, op in zip(a, inst.operands)]
        return outs[0] if len(outs) == 1 and not inst.shape.is_tuple else tuple(outs)

    def _all_gather(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        groups = self._groups(inst, d)
        dim = (inst.dimensions or (0,))[0]
        outs = [coll.all_gather(x, groups, dim) for x in a]  # type: ignore[arg-type]
        return outs[0] if len(outs) == 1 and not inst.shape.is_tuple else tuple(outs)

    def _reduce_scatter(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        groups = self._groups(inst, d)
        dim = (inst.dimensions or (0,))[0]
        outs = [coll.reduce_scatter(x, groups, dim, self._group_reducer(inst, op.shape))  # type: ignore[arg-type]
                for x, op in zip(a, inst.operands)]
        return outs[0] if len(outs) == 1 and not inst.shape.is_tuple else tuple(outs)

    def _all_to_all(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        groups = self._groups(inst, d)
        if inst.dimensions:
            outs = [coll.all_to_all_array(x, groups, inst.dimensions[0]) for x in a]  # type: ignore[arg-type]
            return outs[0] if len(outs) == 1 and not inst.shape.is_tuple else tuple(outs)
        return tuple(coll.all_to_all_tuple(list(a), groups))  # type: ignore[arg-type]

    def _collective_permute(self, inst: HloInstruction, a: list[Value], d: Lanes) -> Value:
        self._device_ids(inst, d)
        return coll.collective_permute(a[0], inst, self.replicas, self.partitions)  # type: ignore[arg-type]

    def _collective_broadcast(self, inst: HloInstruction, a: list[Value],
                              d: Lanes) -> Value:
        groups = self._groups(inst, d)
        outs = [coll.collective_broadcast(x, groups) for x in a]  # type: ignore[arg-type]
        return outs[0] if len(outs) == 1 and not inst.shape.is_tuple else tuple(outs)


Handler = Callable[[Interpreter, HloInstruction, list[Value], Lanes], Value]
I = Interpreter
_HANDLERS: dict[Op, Handler] = {
    Op.PARAMETER: I._unreachable, Op.CONSTANT: I._constant, Op.IOTA: I._iota,
    Op.REPLICA_ID: I._replica_id, Op.PARTITION_ID: I._partition_id,
    Op.COMPARE: I._compare, Op.SELECT: I._select, Op.CLAMP: I._clamp,
    Op.CONVERT: I._convert, Op.BITCAST_CONVERT: I._bitcast_convert,
    Op.IS_FINITE: I._is_finite, Op.OPTIMIZATION_BARRIER: lambda s, i, a, d: a[0],
    **{opcode: _data_movement(fn) for opcode, fn in shapes.HANDLERS.items()},
    Op.DOT: _data_movement(dot), Op.REDUCE: I._reduce,
    Op.REDUCE_WINDOW: I._reduce_window, Op.MAP: I._map, Op.SORT: I._sort,
    Op.TUPLE: lambda s, i, a, d: tuple(a),
    Op.GET_TUPLE_ELEMENT: I._get_tuple_element, Op.CALL: I._call,
    Op.FUSION: I._call, Op.WHILE: I._while, Op.CONDITIONAL: I._conditional,
    Op.ALL_REDUCE: I._all_reduce, Op.ALL_GATHER: I._all_gather,
    Op.REDUCE_SCATTER: I._reduce_scatter, Op.ALL_TO_ALL: I._all_to_all,
    Op.COLLECTIVE_PERMUTE: I._collective_permute,
    Op.COLLECTIVE_BROADCAST: I._collective_broadcast,
}
"""Opcode -> handler(interpreter, instruction, operand values, lanes); elementwise opcodes
are dispatched before this table is consulted."""
del I
