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
  gather / scatter in interp_gather, select-and-scatter in interp_select_scatter,
  convolution in interp_conv,
  reductions in interp_reduce, sort in interp_sort, collectives with every group mode in
  interp_collectives; the steps of instructions that call computations (reduce, sort, map,
  while, conditional ...) in interp_called_steps, recognised custom calls in
  interp_custom_calls.
- while / conditional evaluate on all lanes and keep, per lane, the result the lane's own
  predicate selects, so devices may take different branches or iteration counts.
- Each computation is compiled once per Interpreter into a Program: a list of steps, each a
  closure with the instruction's attributes, element types, numpy functions and replica
  groups already resolved, reading its operands from numbered slots. Whatever fails while
  compiling an instruction (an unsupported opcode, a bad attribute) is raised when that
  instruction runs, as if it were evaluated directly: a branch never taken never fails.
  `compile_module` keeps one Interpreter for repeated runs of an unchanged module;
  `evaluate_module` compiles afresh on every call, so a module changed in place between
  calls (by a pass) is never run from a stale program.
- Complex (c64 / c128) values follow interp_complex (XLA CPU's formulas on the parts).
- rng-bit-generator follows XLA CPU's ThreeFry / Philox bit for bit (interp_rng).
- Anything outside the supported set (custom-call, rng, replica-id inside a reducer,
  sub-byte element types, complex ops XLA does not define ...) raises InterpError naming
  the instruction and opcode, never a wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from tilecc.errors import InterpError, TileccError
from tilecc.limits import StepBudget, cut
from tilecc.hlo import interp_elementwise as ew
from tilecc.hlo import interp_shapes as shapes
from tilecc.hlo.interp_conv import convolution_step
from tilecc.hlo.interp_dot import dot_op
from tilecc.hlo.interp_gather import gather_step, scatter_step
from tilecc.hlo.interp_rng import rng_bit_generator
from tilecc.hlo.interp_select_scatter import select_and_scatter_step
from tilecc.hlo.interp_called_steps import CalledSteps
from tilecc.hlo.interp_collective_steps import COLLECTIVE_BUILDERS, CollectiveSteps
from tilecc.hlo.interp_custom_calls import is_identity_custom_call, refusal_hint
from tilecc.hlo.interp_values import (Array, Lanes, Step, Value, check_input, leaves,
                                      select_lanes)
from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule
from tilecc.hlo.run_limits import check_run_sizes, step_cost
from tilecc.hlo.opcodes import ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, HloOpcode as Op
from tilecc.hlo.types import (bit_width, is_complex, is_floating, numpy_dtype,
                              primitive_type_name)


_CONVERSIONS = frozenset({Op.CONVERT, Op.BITCAST_CONVERT, Op.IS_FINITE, Op.REAL, Op.IMAG})
_UNARY = (ELEMENTWISE_UNARY - _CONVERSIONS - {Op.REDUCE_PRECISION}) | {Op.COPY}
_BINARY = ELEMENTWISE_BINARY - {Op.COMPARE}

def evaluate_module(module: HloModule, inputs: list[np.ndarray], replicas: int,
                    partitions: int = 1, max_steps: int | None = None) -> list[np.ndarray]:
    """Run `module`'s entry on replicas * partitions devices; see the module contract.
    At most `max_steps` steps are evaluated (default: tilecc.limits' "steps"; run_limits
    .step_cost), so a loop whose bound comes from the input stops with a LimitError."""
    return compile_module(module, replicas, partitions, max_steps)(inputs)


@dataclass(slots=True)
class CompiledModule:
    """`module`'s entry compiled for a device count; calling it runs the entry on `inputs`.
    The module must not change between calls (compile again after a pass)."""

    module: HloModule
    entry: HloComputation
    interpreter: Interpreter
    devices: int

    def __call__(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        params = self.entry.parameters
        if len(inputs) != len(params):
            raise InterpError(f"entry computation {self.entry.name} takes {len(params)} "
                              f"parameters, got {len(inputs)} inputs")
        args = [check_input(p, np.asarray(x), self.devices) for p, x in zip(params, inputs)]
        self.interpreter.steps = StepBudget(self.interpreter.max_steps)
        with np.errstate(all="ignore"):
            result = self.interpreter.run(self.entry, args,
                                          Lanes(self.devices, np.arange(self.devices)))
        return leaves(result)


def compile_module(module: HloModule, replicas: int, partitions: int = 1,
                   max_steps: int | None = None) -> CompiledModule:
    """`module` ready to run repeatedly on replicas * partitions devices (computations are
    compiled on first use and kept); each call evaluates at most `max_steps` instructions."""
    if replicas < 1 or partitions < 1:
        raise InterpError(f"need at least one replica and partition, got replicas={replicas} "
                          f"partitions={partitions}")
    entry = module.entry
    if entry is None:
        raise InterpError(f"module {module.name} has no entry computation")
    check_run_sizes(module, replicas * partitions)
    return CompiledModule(module, entry, Interpreter(module, replicas, partitions, max_steps),
                          replicas * partitions)


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


@dataclass(slots=True)
class Program:
    """A compiled computation: parameter k lives in slot k, the other instructions in the
    following slots in evaluation order; each step writes its slot from its operand slots."""

    name: str
    arity: int
    size: int
    steps: list[tuple[int, Step, tuple[int, ...]]]
    root: int
    insts: list[HloInstruction]
    """the instruction of each step, to name it in an error"""
    cost: int
    """steps one evaluation spends per device (tilecc.hlo.run_limits.step_cost)"""


# what numpy and Python raise on attribute values the verifier does not check (a window
# `stride=32ROOT`, a reshape to a shape of other size): the instruction's fault, not ours
UNEVALUABLE = (ValueError, ArithmeticError, IndexError, TypeError)


def located(inst: HloInstruction, error: Exception) -> Exception:
    """`error` as an InterpError naming `inst`, unless it already is one of tilecc's."""
    if isinstance(error, TileccError):
        return error
    return InterpError(f"{inst.name} ({inst.opcode.mnemonic}): cannot evaluate: "
                       f"{cut(str(error) or type(error).__name__)}")


def _deferred(error: Exception) -> Step:
    def fail(a: list[Value], d: Lanes) -> Value:
        raise error
    return fail


class Interpreter(CalledSteps, CollectiveSteps):
    """Evaluates computations of one module; see the module contract."""

    def __init__(self, module: HloModule, replicas: int, partitions: int,
                 max_steps: int | None = None) -> None:
        self.module = module
        self.replicas = replicas
        self.partitions = partitions
        self._programs: dict[int, Program] = {}
        self.max_steps = max_steps
        self.steps = StepBudget(max_steps)

    # ---- driving ----------------------------------------------------------------------

    def run(self, comp: HloComputation, args: Sequence[Value], lanes: Lanes) -> Value:
        """Evaluate `comp` with every value carrying `lanes.count` lanes on axis 0."""
        program = self._programs.get(id(comp))
        if program is None:
            program = self._programs[id(comp)] = self.compile(comp)
        if len(args) != program.arity:
            raise InterpError(f"computation {comp.name} takes {program.arity} "
                              f"arguments, got {len(args)}")
        # each step works on every device: a run on many devices gets fewer iterations
        self.steps.spend(program.cost * self.replicas * self.partitions,
                         f"computation {comp.name}")
        values: list[Value | None] = [*args, *([None] * (program.size - program.arity))]
        index = 0
        try:
            for index, (slot, step, operands) in enumerate(program.steps):
                values[slot] = step([values[i] for i in operands], lanes)  # type: ignore[misc]
        except UNEVALUABLE as error:   # attribute values no verifier rule covers
            raise located(program.insts[index], error) from None
        return values[program.root]  # type: ignore[return-value]

    def compile(self, comp: HloComputation) -> Program:
        arity = len(comp.parameters)
        slots: dict[int, int] = {}
        steps: list[tuple[int, Step, tuple[int, ...]]] = []
        insts: list[HloInstruction] = []
        for inst in _evaluation_order(comp):
            if inst.opcode is Op.PARAMETER:
                number = inst.parameter_number or 0
                if not 0 <= number < arity:
                    raise InterpError(f"{inst.name}: parameter number {number} of "
                                      f"computation {comp.name} with {arity} parameters")
                slots[id(inst)] = number
                continue
            slot = slots[id(inst)] = arity + len(steps)
            steps.append((slot, self.compile_instruction(inst),
                          tuple(slots[id(op)] for op in inst.operands)))
            insts.append(inst)
        assert comp.root is not None
        cost = sum(step_cost(inst.shape) for inst in insts)
        return Program(comp.name, arity, arity + len(steps), steps, slots[id(comp.root)], insts,
                       cost)

    def compile_instruction(self, inst: HloInstruction) -> Step:
        """The step evaluating `inst`; a failure to compile is raised when it runs."""
        try:
            opcode = inst.opcode
            if opcode in _UNARY or opcode in _BINARY:
                t = inst.shape.element_type
                if opcode in _UNARY and inst.operands:  # abs of a complex returns the part type
                    t = inst.operands[0].shape.element_type
                ew.check_supported_type(t, f"{inst.name} ({opcode.mnemonic})")
                if opcode in _UNARY:
                    unary = ew.unary_op(opcode, t)
                    return lambda a, d: unary(a[0])  # type: ignore[arg-type]
                binary = ew.binary_op(opcode, t)
                return lambda a, d: binary(a[0], a[1])  # type: ignore[arg-type]
            builder = _BUILDERS.get(opcode)
            if is_identity_custom_call(inst):
                return lambda a, d: a[0]
            if builder is None:
                raise InterpError(f"{inst.name}: opcode {opcode.mnemonic} is not supported "
                                  f"by the interpreter{refusal_hint(inst)}")
            return builder(self, inst)
        except Exception as error:  # noqa: BLE001 - re-raised when the instruction runs
            return _deferred(located(inst, error))

    # ---- leaves -----------------------------------------------------------------------

    def _constant(self, inst: HloInstruction) -> Step:
        literal = inst.literal
        if literal is None:
            raise InterpError(f"{inst.name}: constant without a value")
        cache: dict[int, Array] = {}  # lane count -> read-only broadcast of the literal

        def step(a: list[Value], d: Lanes) -> Value:
            value = cache.get(d.count)
            if value is None:
                value = cache[d.count] = np.broadcast_to(literal, (d.count,) + literal.shape)
            return value
        return step

    def _iota(self, inst: HloInstruction) -> Step:
        dims, dimension = inst.shape.dims, inst.iota_dimension or 0
        dtype = numpy_dtype(inst.shape.element_type)
        return lambda a, d: shapes.iota(d.count, dims, dimension, dtype)

    def _replica_id(self, inst: HloInstruction) -> Step:
        return lambda a, d: (self._device_ids(inst, d) // self.partitions).astype(np.uint32)

    def _partition_id(self, inst: HloInstruction) -> Step:
        return lambda a, d: (self._device_ids(inst, d) % self.partitions).astype(np.uint32)

    # ---- elementwise with special operands --------------------------------------------

    def _compare(self, inst: HloInstruction) -> Step:
        t = inst.operands[0].shape.element_type
        ew.check_supported_type(t, f"{inst.name} (compare)")
        direction, kind = inst.comparison_direction or "", inst.comparison_type
        return lambda a, d: ew.compare(direction, kind, t, a[0], a[1])  # type: ignore[arg-type]

    def _select(self, inst: HloInstruction) -> Step:
        def step(a: list[Value], d: Lanes) -> Value:
            pred, on_true, on_false = a
            if isinstance(on_true, tuple):
                return select_lanes(pred, on_true, on_false)  # type: ignore[arg-type]
            return ew.select(pred, on_true, on_false)  # type: ignore[arg-type]
        return step

    def _clamp(self, inst: HloInstruction) -> Step:
        t = inst.shape.element_type
        ew.check_supported_type(t, f"{inst.name} (clamp)")

        def step(a: list[Value], d: Lanes) -> Value:
            low, x, high = (np.broadcast_to(v, a[1].shape) for v in a)  # type: ignore[union-attr]
            return ew.clamp(t, low, x, high)
        return step

    def _convert(self, inst: HloInstruction) -> Step:
        source = inst.operands[0].shape.element_type
        target = inst.shape.element_type
        ew.check_supported_type(source, f"{inst.name} (convert)")
        ew.check_supported_type(target, f"{inst.name} (convert)")
        return lambda a, d: ew.convert(a[0], source, target)  # type: ignore[arg-type]

    def _bitcast_convert(self, inst: HloInstruction) -> Step:
        # The raw bytes reinterpreted in memory order, as XLA CPU does on this little-endian
        # host: u32 -> u8[..., 4] puts the least significant byte first, u8[..., 4] -> u32
        # reads it back. Sub-byte types have no packed numpy layout to view.
        source, target = inst.operands[0].shape.element_type, inst.shape.element_type
        dtype = numpy_dtype(target)
        if min(bit_width(source), bit_width(target)) < 8 and \
                bit_width(source) != bit_width(target):
            raise InterpError(f"{inst.name}: bitcast-convert between "
                              f"{primitive_type_name(source)} and {primitive_type_name(target)}"
                              " (sub-byte widths) is not supported by the interpreter")
        dims = inst.shape.dims

        def step(a: list[Value], d: Lanes) -> Value:
            x = np.ascontiguousarray(a[0])
            lanes = x.shape[0]
            return x.view(dtype).reshape((lanes,) + dims)
        return step

    def _reduce_precision(self, inst: HloInstruction) -> Step:
        t = inst.shape.element_type
        try:
            exponent = int(inst.attributes["exponent_bits"])
            mantissa = int(inst.attributes["mantissa_bits"])
        except (KeyError, ValueError):
            raise InterpError(f"{inst.name}: reduce-precision needs integer exponent_bits "
                              "and mantissa_bits attributes") from None
        if exponent < 1 or mantissa < 0:
            raise InterpError(f"{inst.name}: reduce-precision to {exponent} exponent and "
                              f"{mantissa} mantissa bits (needs >= 1 and >= 0)")
        return lambda a, d: ew.reduce_precision(t, a[0], exponent, mantissa)  # type: ignore[arg-type]

    def _real_imag(self, inst: HloInstruction) -> Step:
        # XLA: of a complex, its part; of a float, the value itself (real) or zero (imag)
        source = inst.operands[0].shape.element_type
        if not (is_floating(source) or is_complex(source)):
            raise InterpError(f"{inst.name}: {inst.opcode.mnemonic} of "
                              f"{primitive_type_name(source)} (needs a float or complex)")
        dtype = numpy_dtype(inst.shape.element_type)
        if inst.opcode is Op.REAL:
            return lambda a, d: np.real(a[0]).astype(dtype)
        return lambda a, d: np.imag(a[0]).astype(dtype)

    def _is_finite(self, inst: HloInstruction) -> Step:
        t = inst.operands[0].shape.element_type
        return lambda a, d: ew.is_finite(t, a[0])  # type: ignore[arg-type]

    def _rng_bit_generator(self, inst: HloInstruction) -> Step:
        shapes_ = inst.shape.tuple_shapes
        if len(shapes_) != 2 or not shapes_[1].is_array:
            raise InterpError(f"{inst.name}: rng-bit-generator returns (state, bits)")
        algorithm = inst.attributes.get("algorithm", "rng_default")
        dims, dtype = shapes_[1].dims, numpy_dtype(shapes_[1].element_type)
        if dtype.itemsize * 8 != bit_width(shapes_[1].element_type):
            raise InterpError(f"{inst.name}: rng-bit-generator of "
                              f"{primitive_type_name(shapes_[1].element_type)} (sub-byte) is "
                              "not supported by the interpreter")

        def step(a: list[Value], d: Lanes) -> Value:
            state = np.asarray(a[0])
            return rng_bit_generator(algorithm, state.reshape(state.shape[0], -1), dims, dtype)
        return step

    def _data_movement(self, inst: HloInstruction) -> Step:
        fn = shapes.HANDLERS[inst.opcode]
        return lambda a, d: fn(inst, a)  # type: ignore[arg-type]

    def _reshape(self, inst: HloInstruction) -> Step:
        dims = inst.shape.dims
        return lambda a, d: a[0].reshape((a[0].shape[0],) + dims)  # type: ignore[union-attr]

    def _broadcast(self, inst: HloInstruction) -> Step:
        to_result = shapes.broadcast_plan(inst.dimensions or (), inst.shape.dims)
        return lambda a, d: to_result(a[0])  # type: ignore[arg-type]

    def _transpose(self, inst: HloInstruction) -> Step:
        perm = [0] + [1 + p for p in inst.dimensions or ()]
        return lambda a, d: np.transpose(a[0], perm)

    def _dot(self, inst: HloInstruction) -> Step:
        product = dot_op(inst)
        return lambda a, d: product(a[0], a[1])  # type: ignore[arg-type]

    # ---- tuples and computations ---------------------------------------------------

    def _get_tuple_element(self, inst: HloInstruction) -> Step:
        index = inst.tuple_index

        def step(a: list[Value], d: Lanes) -> Value:
            value = a[0]
            if not isinstance(value, tuple) or index is None:
                raise InterpError(f"{inst.name}: get-tuple-element of a non-tuple value")
            return value[index]
        return step

def _unreachable(interp: Interpreter, inst: HloInstruction) -> Step:
    raise AssertionError(f"{inst.name}: parameters are bound by run()")


I = Interpreter
_BUILDERS: dict[Op, Callable[[Interpreter, HloInstruction], Step]] = {
    Op.PARAMETER: _unreachable, Op.CONSTANT: I._constant, Op.IOTA: I._iota,
    Op.REPLICA_ID: I._replica_id, Op.PARTITION_ID: I._partition_id,
    Op.COMPARE: I._compare, Op.SELECT: I._select, Op.CLAMP: I._clamp,
    Op.CONVERT: I._convert, Op.BITCAST_CONVERT: I._bitcast_convert,
    Op.IS_FINITE: I._is_finite, Op.REDUCE_PRECISION: I._reduce_precision,
    Op.REAL: I._real_imag, Op.IMAG: I._real_imag,
    Op.OPTIMIZATION_BARRIER: lambda s, i: lambda a, d: a[0],
    Op.RNG_BIT_GENERATOR: I._rng_bit_generator,
    **{opcode: I._data_movement for opcode in shapes.HANDLERS},
    Op.RESHAPE: I._reshape, Op.BROADCAST: I._broadcast, Op.TRANSPOSE: I._transpose,
    Op.DOT: I._dot, Op.REDUCE: I._reduce, Op.CONVOLUTION: convolution_step,
    Op.GATHER: gather_step, Op.SCATTER: scatter_step,
    Op.SELECT_AND_SCATTER: select_and_scatter_step,
    Op.REDUCE_WINDOW: I._reduce_window, Op.MAP: I._map, Op.SORT: I._sort,
    Op.TUPLE: lambda s, i: lambda a, d: tuple(a),
    Op.GET_TUPLE_ELEMENT: I._get_tuple_element, Op.CALL: I._call,
    Op.FUSION: I._call, Op.WHILE: I._while, Op.CONDITIONAL: I._conditional,
    **COLLECTIVE_BUILDERS,
}
"""Opcode -> builder(interpreter, instruction) returning the instruction's step; the
elementwise opcodes are compiled before this table is consulted."""
del I
