"""Names of SynthesizeAllReduceSignals (spec 002, reference/pld.md step 1).

Contract: `reserved_names(program)` is every variable name of the program, names used
only in a function's signature (parameter annotations and defaults, return annotations,
decorator arguments) included, plus every alloc_window_buffer `name`. NameSource draws
fresh names from one program-wide counter: a signal suffix n only when
`__allreduce_signal_world_size_n`, `__allreduce_signal_buf_n` and `__allreduce_signal_n`
are all free, and `__allreduce_result_n` names from the same counter.
"""

from __future__ import annotations

from tilecc.host import ir
from tilecc.host.function_index import function_index
from tilecc.host.op_forms import ALLOC_WINDOW_BUFFER, ALLREDUCE


def reserved_names(program: ir.Program,
                   allreduces: dict[str, list[ir.OpCall]] | None = None) -> set[str]:
    """Every variable name of the program (signatures included) and every
    alloc_window_buffer `name` (step 2). With `allreduces`, also each function's
    pld.tensor.allreduce calls, in visit order, by function name. Both come from the
    functions' indexes (tilecc/host/function_index.py), which the parser's checks built."""
    names: set[str] = set()
    for func in program.functions:
        index = function_index(func)
        names |= index.names
        calls = allreduces.setdefault(func.name, []) if allreduces is not None else None
        for call, _ in index.calls:
            if not isinstance(call, ir.OpCall):
                continue
            if call.op == ALLOC_WINDOW_BUFFER:
                name = call.kwarg("name")
                if isinstance(name, ir.Const) and isinstance(name.value, str) and name.value:
                    names.add(name.value)
            elif call.op == ALLREDUCE and calls is not None:
                calls.append(call)
    return names


class NameSource:
    """The program-wide counter and reserved set of step 2."""

    def __init__(self, used: set[str]) -> None:
        self.used = used
        self.next_id = 0

    def signal_names(self) -> tuple[str, str, str]:
        while True:
            n = self.next_id
            self.next_id += 1
            names = (f"__allreduce_signal_world_size_{n}", f"__allreduce_signal_buf_{n}",
                     f"__allreduce_signal_{n}")
            if not any(name in self.used for name in names):
                self.used.update(names)
                return names

    def result_name(self) -> str:
        while True:
            name = f"__allreduce_result_{self.next_id}"
            self.next_id += 1
            if name not in self.used:
                self.used.add(name)
                return name


def assigned_names(stmt: ir.Stmt) -> list[str]:
    """Names a compound statement binds: assignment targets, loop indices and carried
    values, `with ... as` variables, nested statements included."""
    names: list[str] = []
    for inner in ir.walk_stmts((stmt,)):
        if isinstance(inner, ir.Assign):
            names.extend(t.name for t in ir.target_vars(inner.target))
        elif isinstance(inner, ir.For):
            names.extend(v.name for v in ((inner.index,) if inner.index else ()) + (inner.iter_args or ()))
        elif isinstance(inner, ir.With) and inner.var is not None:
            names.append(inner.var.name)
    return names
