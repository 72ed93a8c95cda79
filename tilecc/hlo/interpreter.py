"""A numpy interpreter for HLO modules, vectorized across replicas and partitions.

Contract:
- `evaluate_module(module, inputs, replicas, partitions=1)` runs the entry computation on
  D = replicas * partitions devices at once. `inputs` holds one array per entry parameter,
  shaped (D, *parameter dims) with the parameter's exact dtype (a tuple parameter takes a
  tuple of them, nested as its shape); device
  d = replica * partitions + partition. The result is the root's value flattened (a tuple
  root gives its leaves in order, a non-tuple root one output), each shaped (D, *dims).
  Outputs are not copied: a value every device shares may be one read-only broadcast
  array, and a passed-through input is the caller's own array; copy before writing.
- Every value is an array whose axis 0 is the lane axis: the devices in the entry
  computation, or the flattened scalar lanes when a reducer computation (`to_apply` of
  reduce, all-reduce, map ...) runs on whole slices at once. No Python loop runs per element.
- Each opcode's step comes from one table, tilecc.hlo.interp.steps.STEPS; the semantics
  live in the subpackage tilecc.hlo.interp: elementwise (XLA's elementwise rules),
  shapes (data movement), gather, select_scatter, conv, dot, reduce, sort, collectives
  (every group mode), called_steps (instructions that call computations: reduce, sort,
  map, while, conditional ...), collective_steps, custom_calls (recognised custom calls),
  fft, triangular_solve, scan (their attributes: tilecc.hlo.op_configs).
- while / conditional evaluate on all lanes and keep, per lane, the result the lane's own
  predicate selects, so devices may take different branches or iteration counts.
- Each computation is compiled once per Interpreter into a Program: a list of steps, each a
  closure with the instruction's attributes, element types, numpy functions and replica
  groups already resolved, reading its operands from numbered slots. A slot is emptied by
  the step that uses it last, and `run` takes its argument list over as its slot table, so
  a value no one else holds is referenced only by its consumer's operand list: a step may
  then write its result into that operand's buffer (values.dead_array), which keeps a
  while loop's state in one buffer across trips. Whatever fails while
  compiling an instruction (an unsupported opcode, a bad attribute) is raised when that
  instruction runs, as if it were evaluated directly: a branch never taken never fails.
  `compile_module` keeps one Interpreter for repeated runs of an unchanged module;
  `evaluate_module` compiles afresh on every call, so a module changed in place between
  calls (by a pass) is never run from a stale program.
- A bf16 value XLA CPU keeps in f32 for its reader (a convert to f32, a promoted bf16
  all-reduce: interp.excess_precision) is computed for that reader by detached f32 copies
  of the instructions, compiled in its place; the module does not change.
- Complex (c64 / c128) values follow interp.complex_math (XLA CPU's formulas on the parts).
- rng-bit-generator follows XLA CPU's ThreeFry / Philox bit for bit (interp.rng); rng and
  rng-get-and-update-state follow XLA CPU's rng expansion (interp.rng_steps): their
  counters start afresh with each compile_module / evaluate_module and advance with every
  run of one compiled module, as those of one XLA executable do.
- Sub-byte integers (s4 / u4 / s2 / u2) compute on an 8-bit carrier (interp.sub_byte).
- Anything outside the supported set (custom-call, replica-id inside a reducer,
  complex ops XLA does not define ...) raises InterpError naming
  the instruction and opcode, never a wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tilecc.errors import InterpError, TileccError
from tilecc.limits import StepBudget, cut
from tilecc.hlo.interp.excess_precision import f32_replacement
from tilecc.hlo.interp.steps import STEPS
from tilecc.hlo.interp.values import Lanes, Step, Value, check_input, leaves
from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule
from tilecc.hlo.run_limits import check_run_sizes, instruction_cost
from tilecc.hlo.opcodes import HloOpcode as Op

def evaluate_module(module: HloModule, inputs: Sequence[Any], replicas: int,
                    partitions: int = 1, max_steps: int | None = None) -> list[np.ndarray]:
    """Run `module`'s entry on replicas * partitions devices; see the module contract.
    At most `max_steps` steps are evaluated (default: tilecc.limits' "steps"; run_limits
    .instruction_cost), so a loop whose bound comes from the input stops with a LimitError."""
    return compile_module(module, replicas, partitions, max_steps)(inputs)


@dataclass(slots=True)
class CompiledModule:
    """`module`'s entry compiled for a device count; calling it runs the entry on `inputs`.
    The module must not change between calls (compile again after a pass)."""

    module: HloModule
    entry: HloComputation
    interpreter: Interpreter
    devices: int

    def __call__(self, inputs: Sequence[Any]) -> list[np.ndarray]:
        params = self.entry.parameters
        if len(inputs) != len(params):
            raise InterpError(f"entry computation {self.entry.name} takes {len(params)} "
                              f"parameters, got {len(inputs)} inputs")
        args = [check_input(p, x, self.devices) for p, x in zip(params, inputs)]
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
    check_run_sizes(module, replicas * partitions, max_steps)
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
    steps: list[tuple[int, Step, tuple[int, ...], tuple[int, ...]]]
    """(slot, step, operand slots, slots whose last use this step is: emptied before it runs)"""
    root: int
    insts: list[HloInstruction]
    """the instruction of each step, to name it in an error"""
    cost: int
    """steps one evaluation spends per device (tilecc.hlo.run_limits.instruction_cost)"""


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


class Interpreter:
    """Evaluates computations of one module (a values.Runner for the step builders); see
    the module contract."""

    def __init__(self, module: HloModule, replicas: int, partitions: int,
                 max_steps: int | None = None) -> None:
        self.module = module
        self.replicas = replicas
        self.partitions = partitions
        self._programs: dict[int, Program] = {}
        self.max_steps = max_steps
        self.steps = StepBudget(max_steps)

    def run(self, comp: HloComputation, args: list[Value], lanes: Lanes) -> Value:
        """Evaluate `comp` with every value carrying `lanes.count` lanes on axis 0. The list
        `args` is taken over (it becomes the slot table): the caller must not use it after."""
        program = self._programs.get(id(comp))
        if program is None:
            program = self._programs[id(comp)] = self.compile(comp)
        if len(args) != program.arity:
            raise InterpError(f"computation {comp.name} takes {program.arity} "
                              f"arguments, got {len(args)}")
        # each step works on every device: a run on many devices gets fewer iterations
        self.steps.spend(program.cost * self.replicas * self.partitions,
                         f"computation {comp.name}")
        values: list[Any] = args
        values.extend([None] * (program.size - program.arity))
        index = 0
        try:
            for index, (slot, step, operands, last) in enumerate(program.steps):
                taken = [values[i] for i in operands]
                for i in last:
                    values[i] = None
                values[slot] = step(taken, lanes)
        except UNEVALUABLE as error:   # attribute values no verifier rule covers
            raise located(program.insts[index], error) from None
        result: Value = values[program.root]
        return result

    def compile(self, comp: HloComputation) -> Program:
        arity = len(comp.parameters)
        slots: dict[int, int] = {}
        steps: list[tuple[int, Step, tuple[int, ...]]] = []
        insts: list[HloInstruction] = []
        cost = 0  # of the computation's own instructions
        for inst in _evaluation_order(comp):
            if inst.opcode is Op.PARAMETER:
                number = inst.parameter_number or 0
                if not 0 <= number < arity:
                    raise InterpError(f"{inst.name}: parameter number {number} of "
                                      f"computation {comp.name} with {arity} parameters")
                slots[id(inst)] = number
                continue
            # XLA CPU reads some bf16 values in f32: evaluate the instructions it does
            for each in f32_replacement(inst) or (inst,):
                slot = slots[id(each)] = arity + len(steps)
                steps.append((slot, self.compile_instruction(each),
                              tuple(slots[id(op)] for op in each.operands)))
                insts.append(each)
            slots[id(inst)] = slot
            cost += instruction_cost(inst)
        assert comp.root is not None
        root = slots[id(comp.root)]
        last_use: dict[int, int] = {}  # slot -> the step that reads it last
        for k, (_, _, operands) in enumerate(steps):
            for i in operands:
                last_use[i] = k
        last_use.pop(root, None)
        emptied: list[list[int]] = [[] for _ in steps]
        for i, k in last_use.items():
            emptied[k].append(i)
        return Program(comp.name, arity, arity + len(steps),
                       [(slot, step, operands, tuple(gone))
                        for (slot, step, operands), gone in zip(steps, emptied)],
                       root, insts, cost)

    def compile_instruction(self, inst: HloInstruction) -> Step:
        """The step evaluating `inst` (interp/steps.py's table); a failure to compile is
        raised when the step runs."""
        try:
            builder = STEPS.get(inst.opcode)
            if builder is None:
                raise InterpError(f"{inst.name}: opcode {inst.opcode.mnemonic} is not "
                                  "supported by the interpreter")
            return builder(self, inst)
        except Exception as error:  # noqa: BLE001 - re-raised when the instruction runs
            return _deferred(located(inst, error))
