"""Checks an HLO module passes before it is run, so that no input allocates or recurses
without bound.

Contract: `check_run_sizes(module, devices)` raises LimitError (tilecc/limits.py, bound
"elements") naming the instruction whose value -- every leaf of its shape, times the
device count -- holds more elements than the bound, before anything is allocated; and
VerifyError when the call graph has a cycle (check_call_graph). `check_call_graph(module)`
raises VerifyError naming the instruction that closes a cycle of calls (a computation
calling itself, or a while whose body is its own condition's caller): XLA's call graph is a
DAG, and an interpreter would recurse forever on a cycle. Both walk iteratively.
`step_cost(shape)` is what one evaluation of an instruction spends of the "steps" bound.
"""

from __future__ import annotations

from tilecc.errors import VerifyError
from tilecc.hlo.ir import HloComputation, HloModule
from tilecc.hlo.types import Shape
from tilecc.limits import beyond, cut, limit


STEP_ELEMENTS = 1024


def step_cost(shape: Shape) -> int:
    """Steps one evaluation of an instruction of `shape` spends per device: one per
    STEP_ELEMENTS elements of its largest value, at least one, so the "steps" bound
    tracks the work done, not only the instruction count."""
    return max(1, _leaf_elements(shape) // STEP_ELEMENTS)


def _leaf_elements(shape: Shape) -> int:
    """The largest element count among the array leaves of `shape`."""
    most = 0
    stack = [shape]
    while stack:
        s = stack.pop()
        if s.is_tuple:
            stack.extend(s.tuple_shapes)
        else:
            most = max(most, s.element_count())
    return most


def check_run_sizes(module: HloModule, devices: int) -> None:
    bound = limit("elements")
    if devices > bound:
        raise beyond("elements", devices, f"module {module.name} on replicas x partitions "
                     f"= {devices} devices")
    check_call_graph(module)
    for comp in module.computations:
        for inst in comp.instructions:
            elements = _leaf_elements(inst.shape) * devices
            if elements > bound:
                raise beyond("elements", elements, f"{comp.name}/{inst.name} "
                             f"({cut(inst.shape.to_text())} on {devices} devices)")


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
