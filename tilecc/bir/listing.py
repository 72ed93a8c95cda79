"""A readable listing of a BIR program: `tilecc codegen --format=text` and the demo.

Contract: `format_program(program)` is text for people, not a format to read back (BIR
JSON is that): a header line per program argument, then one line per instruction in
program order, `name  engine  outs <- ins  field=value ...`; an access pattern is
`memref+offset{[step,num],...}`, an immediate its value, enums by name.
"""

from __future__ import annotations

import dataclasses

from tilecc.bir.inst import AccessPattern, Argument, Inst, Program

_HEADER = {"name", "engine", "ins", "outs"}


def format_program(program: Program) -> str:
    lines = [f"program {program.name}"]
    lines += [f"  input  {t.name}: {t.dtype.name}{list(t.shape)}" for t in program.inputs]
    lines += [f"  output {t.name}: {t.dtype.name}{list(t.shape)}" for t in program.outputs]
    lines += ["  " + format_instruction(inst) for inst in program.instructions]
    return "\n".join(lines) + "\n"


def format_argument(arg: Argument) -> str:
    if not isinstance(arg, AccessPattern):
        return repr(arg.value)
    pairs = ",".join(f"[{step},{num}]" for step, num in arg.ap)
    return f"{arg.memref}+{arg.offset}{{{pairs}}}"


def format_instruction(inst: Inst) -> str:
    fields = [f"{f.name}={_value(getattr(inst, f.name))}" for f in dataclasses.fields(inst)
              if f.name not in _HEADER]
    outs = ", ".join(format_argument(a) for a in inst.outs) or "-"
    ins = ", ".join(format_argument(a) for a in inst.ins)
    return f"{inst.name:<24} {inst.engine.name:<10} {outs} <- {ins}  {' '.join(fields)}".rstrip()


def _value(value: object) -> str:
    return value.name if hasattr(value, "name") else repr(value)
