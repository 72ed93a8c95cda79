"""A readable listing of a KLR kernel: `tilecc trace --format=text`.

Contract: `format_kernel(kernel)` is text for people, not a format to read back (KLR JSON
is that): a header line per kernel argument (`input a: float32[128, 64] hbm`), then one
line per statement in body order, `LINE  ctor  field=value ...` in KLR's field order, with
accesses written as `tensor[indexes]` (a slice `l:u:step`, an access pattern
`tensor+offset{[step,num],...}`), enums by name and the source line of the statement
(`pos`) first ("-" when the statement has none).
"""

from __future__ import annotations

import dataclasses
from enum import Enum

from tilecc.klr import ast as k


def format_kernel(kernel: k.Kernel) -> str:
    lines = [f"kernel {kernel.name}"]
    lines += [f"  input  {_tensor_decl(t)}" for t in kernel.inputs]
    lines += [f"  output {_tensor_decl(t)}" for t in kernel.outputs]
    lines += [format_statement(stmt) for stmt in kernel.body]
    return "\n".join(lines) + "\n"


def format_statement(stmt: k.Stmt) -> str:
    pos = getattr(stmt, "pos", None)
    where = str(pos.line) if pos is not None else "-"
    fields = [f"{f.name}={format_value(getattr(stmt, f.name))}"
              for f in dataclasses.fields(stmt) if f.name != "pos"
              and getattr(stmt, f.name) is not None]
    return f"  {where:>4}  {k.OPERATOR_CTOR[type(stmt)]:<22} {' '.join(fields)}".rstrip()


def format_value(value: object) -> str:
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, k.TensorName):
        return value.name
    if isinstance(value, k.AccessBasic):
        return f"{value.tensor.name}[{', '.join(_index(i) for i in value.indexes)}]"
    if isinstance(value, k.AccessPattern):
        pairs = ",".join(f"[{p.step},{p.num}]" for p in value.pattern)
        return (f"{value.tensor.name}+{value.par_offset}:{value.free_offset}"
                f"{{[{value.par_num}]{pairs}}}")
    if isinstance(value, k.Immediate):
        return repr(value.value)
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(format_value(v) for v in value) + ")"
    return repr(value)


def _index(index: k.Index) -> str:
    if isinstance(index, k.Coord):
        return str(index.e)
    step = f":{index.step}" if index.step != 1 else ""
    return f"{index.l}:{index.u}{step}"


def _tensor_decl(tensor: k.TensorName) -> str:
    dims = [tensor.shape.par_dim, *tensor.shape.free_dims]
    return f"{tensor.name}: {tensor.dtype.name}{dims} {tensor.address.memory.name}"
