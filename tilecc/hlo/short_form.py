"""Printer of jax's short HLO form (`lowered.as_text(dialect="hlo")`), beside XLA's long form.

Contract: `print_short(module)` is the long form of tilecc.hlo.printer with what jax's
short form leaves out left out: no `%` before names, computation heads without the
signature (`name {`, `ENTRY name {`), no `/*index=N*/` in operand lists (tuple shapes keep
them), no metadata and no stack-frame block. Instruction order and attributes are the
long form's. On a module jax
printed in short form, the output is that text byte for byte (tested on the fixtures), so
`diff` against a jax dump shows only what a pass rewrote. XLA's parser reads both forms.
"""

from __future__ import annotations

from tilecc.hlo.ir import HloModule
from tilecc.hlo.printer import _header_keys, _header_value, computations_in_print_order, \
    instructions_in_print_order, print_instruction
from tilecc.hlo.types import index_join


def print_short(module: HloModule) -> str:
    header = "HloModule " + module.name
    for key in _header_keys(module):
        header += f", {key}={_header_value(module, key)}"
    parts = [header, "\n\n"]
    for comp in computations_in_print_order(module):
        lines = [f"{'ENTRY ' if comp is module.entry else ''}{comp.name} {{"]
        for inst in instructions_in_print_order(comp):
            line = print_instruction(inst, inst is comp.root)
            if inst.metadata is not None:
                line = line.replace(", metadata=" + inst.metadata, "", 1)
            if len(inst.operands) > 5:  # operand lists carry no /*index=N*/ in this form
                names = ["%" + op.name for op in inst.operands]
                line = line.replace(f"({index_join(names)})", f"({', '.join(names)})", 1)
            lines.append(_without_percent(line))
        lines.append("}" if comp.execution_thread is None
                     else f'}}, execution_thread="{comp.execution_thread}"')
        parts += ["\n".join(lines), "\n\n"]
    return "".join(parts)


def _without_percent(line: str) -> str:
    """`line` without the `%` that marks a name; a `%` inside a quoted string stays."""
    if "%" not in line:
        return line
    out: list[str] = []
    quoted = escaped = False
    for char in line:
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == "%":
            continue
        out.append(char)
    return "".join(out)
