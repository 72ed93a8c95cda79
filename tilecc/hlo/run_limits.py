"""Checks an HLO module passes before it is run, so that no input allocates or recurses
without bound.

Contract: `check_run_sizes(module, devices)` raises LimitError (tilecc/limits.py, bound
"elements") naming the instruction whose value -- every leaf of its shape, times the
device count -- holds more elements than the bound, before anything is allocated;
InterpError for a value of more dimensions than a numpy array holds (64); and
VerifyError when the call graph has a cycle (check_call_graph). `check_call_graph(module)`
raises VerifyError naming the instruction that closes a cycle of calls (a computation
calling itself, or a while whose body is its own condition's caller): XLA's call graph is a
DAG, and an interpreter would recurse forever on a cycle. Both walk iteratively.
`step_cost(shape)` is what one evaluation of an instruction of that shape spends of the
"steps" bound; `instruction_cost(inst)` adds the work of the instructions whose result is
smaller than the element operations that make it (dot, convolution, reduce-window,
select-and-scatter), so no single step does unbounded work. `check_run_sizes(module,
devices, max_steps)` also refuses, before any input is made, an entry computation whose
one evaluation on every device already needs more steps than the bound.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from math import prod

from tilecc.errors import InterpError, VerifyError
from tilecc.hlo.interp.reduce_order import SEQUENTIAL_LIMIT
from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule
from tilecc.hlo.literal import MAX_ARRAY_RANK
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import Shape
from tilecc.limits import beyond, cut, limit


STEP_ELEMENTS = 1024


def step_cost(shape: Shape) -> int:
    """Steps one evaluation of an instruction of `shape` spends per device: one per
    STEP_ELEMENTS elements of its largest value, at least one, so the "steps" bound
    tracks the work done, not only the instruction count."""
    return max(1, _leaf_elements(shape) // STEP_ELEMENTS)


_WINDOW_SIZE = re.compile(r"\bsize=(\d+(?:x\d+)*)")
_DIGITS = re.compile(r"\d+")


def instruction_cost(inst: HloInstruction) -> int:
    """Steps one evaluation of `inst` spends per device: step_cost of its shape, times the
    operand elements that combine into one result element where that number is not 1 --
    the contracted elements of a dot, the kernel window times the input features of a
    convolution, the window of a reduce-window or select-and-scatter. Attributes that do
    not parse cost nothing extra (the instruction fails when it runs)."""
    return max(1, _leaf_elements(inst.shape) * _combined(inst) // STEP_ELEMENTS)


def _combined(inst: HloInstruction) -> int:
    """How many operand elements make one element of `inst`'s result (see instruction_cost)."""
    if inst.opcode is Op.DOT and inst.operands:
        lhs = inst.operands[0].shape
        text = inst.attributes.get("lhs_contracting_dims", "")
        dims = [int(d) for d in _DIGITS.findall(text)]
        return prod(lhs.dims[d] for d in dims if d < lhs.rank) if lhs.is_array else 1
    if inst.opcode is Op.CONVOLUTION and len(inst.operands) == 2:
        kernel = inst.operands[1].shape
        labels = inst.attributes.get("dim_labels", "").split("->")[0].split("_")
        if not kernel.is_array or len(labels) != 2 or "o" not in labels[1] \
                or len(labels[1]) != kernel.rank:
            return 1
        return max(1, kernel.element_count() // max(1, kernel.dims[labels[1].index("o")]))
    if inst.opcode in (Op.REDUCE_WINDOW, Op.SELECT_AND_SCATTER):
        match = _WINDOW_SIZE.search(inst.attributes.get("window", ""))
        if match is None:
            return 1
        # select-and-scatter's result is its operand: a window per element at most
        sizes = [int(v) for v in match.group(1).split("x")]
        if inst.opcode is Op.REDUCE_WINDOW and prod(sizes) > SEQUENTIAL_LIMIT:
            # a long window is reduced by doubling (or XLA's scan rewrite): a few passes
            # over the operand per bit of each window size (interp.reduce_window)
            operand = inst.operands[0].shape if inst.operands else inst.shape
            ratio = -(-_leaf_elements(operand) // max(1, _leaf_elements(inst.shape)))
            return ratio * 2 * sum(size.bit_length() for size in sizes)
        return prod(sizes)
    return 1


def computation_cost(comp: HloComputation) -> int:
    """Steps one evaluation of `comp` spends per device (its parameters are given)."""
    return sum(instruction_cost(inst) for inst in comp.instructions
               if inst.opcode is not Op.PARAMETER)


def _array_leaves(shape: Shape) -> Iterator[Shape]:
    """The array leaves of `shape` (itself when it is not a tuple)."""
    stack = [shape]
    while stack:
        s = stack.pop()
        if s.is_tuple:
            stack.extend(s.tuple_shapes)
        else:
            yield s


def _leaf_rank(shape: Shape) -> int:
    """The largest rank among the array leaves of `shape`."""
    return max((s.rank for s in _array_leaves(shape)), default=0)


def _leaf_elements(shape: Shape) -> int:
    """The largest element count among the array leaves of `shape`."""
    return max((s.element_count() for s in _array_leaves(shape)), default=0)


def check_run_sizes(module: HloModule, devices: int, max_steps: int | None = None) -> None:
    bound = limit("elements")
    if devices > bound:
        raise beyond("elements", devices, f"module {module.name} on replicas x partitions "
                     f"= {devices} devices")
    check_call_graph(module)
    for comp in module.computations:
        for inst in comp.instructions:
            if (rank := _leaf_rank(inst.shape)) > MAX_ARRAY_RANK:
                raise InterpError(f"{comp.name}/{inst.name}: a value of {rank} dimensions, "
                                  f"more than the {MAX_ARRAY_RANK} an array holds")
            elements = _leaf_elements(inst.shape) * devices
            if elements > bound:
                raise beyond("elements", elements, f"{comp.name}/{inst.name} "
                             f"({cut(inst.shape.to_text())} on {devices} devices)")
    entry = module.entry
    steps = limit("steps") if max_steps is None else max_steps
    if entry is not None and (needed := computation_cost(entry) * devices) > steps:
        raise beyond("steps", needed, f"computation {entry.name}", steps)


def check_call_graph(module: HloModule) -> None:
    state: dict[int, int] = {}   # id -> 1 on the current path, 2 when finished
    for root in module.computations:
        if id(root) in state:
            continue
        path: list[HloComputation] = [root]
        pending = [iter(_calls(root))]
        state[id(root)] = 1
        while pending:
            step = next(pending[-1], None)
            if step is None:
                state[id(path.pop())] = 2
                pending.pop()
                continue
            inst_name, callee = step
            seen = state.get(id(callee))
            if seen == 1:
                cycle = [c.name for c in path[path.index(callee):]] + [callee.name]
                raise VerifyError(f"{path[-1].name}/{cut(inst_name)}: calls {callee.name}, "
                                  f"a cycle of calls ({cut(' -> '.join(cycle))}); HLO "
                                  "computations may not call themselves")
            if seen is None:
                state[id(callee)] = 1
                path.append(callee)
                pending.append(iter(_calls(callee)))


def _calls(comp: HloComputation) -> list[tuple[str, HloComputation]]:
    return [(inst.name, callee) for inst in comp.instructions
            for callee in inst.called_computations()]
