"""What a host function's parameter annotations say: tensor shapes, element types,
direction, and the `pl.dynamic` dimensions they bind.

Contract: `param_type(annotation)` reads pypto's annotation forms
`pl.Tensor[[d0, d1], pl.FP32]`, `pld.DistributedTensor[[...], dtype]`, the direction
wrappers `pl.Out[...]` / `pl.InOut[...]` and `pl.Scalar[dtype]` into a ParamType (None
for anything else). `NAME = pl.dynamic("NAME")` at module level makes NAME a DynamicDim
(module_values.py); a call binds it from the shape of the first argument whose
annotation names it (`bind_dynamic_dims`), so the function can use NAME as a value, as
pypto resolves a dynamic dimension at run time. An unbound or conflicting dimension is an
InterpError naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tilecc.errors import InterpError
from tilecc.host import ir

TENSORS = ("pl.Tensor", "pld.DistributedTensor", "pl.Tile")
DIRECTIONS = ("pl.Out", "pl.InOut", "pl.In")


@dataclass(frozen=True, slots=True)
class DynamicDim:
    """The value of `pl.dynamic("NAME")` before a call binds it."""
    name: str


@dataclass(frozen=True)
class ParamType:
    kind: str                      # "tensor" or "scalar"
    dims: tuple[ir.Expr, ...]      # tensor dimensions as written
    dtype: str                     # the pl dtype name: FP32, INT32, ...
    direction: str = "In"          # In, Out or InOut


def _symbol(expr: ir.Expr) -> str | None:
    return expr.path if isinstance(expr, ir.Symbol) else None


def param_type(annotation: ir.Expr | None) -> ParamType | None:
    direction = "In"
    if isinstance(annotation, ir.Subscript) and _symbol(annotation.value) in DIRECTIONS:
        direction = str(_symbol(annotation.value)).rsplit(".", 1)[1]
        annotation = annotation.index
    if not isinstance(annotation, ir.Subscript):
        return None
    head, index = _symbol(annotation.value), annotation.index
    items = index.items if isinstance(index, ir.TupleExpr) else (index,)
    dtype = _symbol(items[-1]) if items else None
    if dtype is None or not dtype.startswith("pl."):
        return None
    if head == "pl.Scalar" and len(items) == 1:
        return ParamType("scalar", (), dtype[3:], direction)
    if head in TENSORS and len(items) >= 2 and isinstance(items[0], ir.ListExpr):
        return ParamType("tensor", items[0].items, dtype[3:], direction)
    return None


def bind_dynamic_dims(func: ir.Function, args: Sequence[Any], dynamic: set[str], bound: dict[str, int]) -> None:
    """Bind every dimension of `dynamic` a parameter annotation names from its argument's
    shape into `bound` (InterpError when two arguments disagree)."""
    for param, arg in zip(func.params, args):
        ptype = param_type(param.annotation)
        shape = getattr(arg, "shape", None)
        if ptype is None or ptype.kind != "tensor" or shape is None:
            continue
        for axis, dim in enumerate(ptype.dims[:len(shape)]):
            if isinstance(dim, ir.Var) and dim.name in dynamic:
                if bound.setdefault(dim.name, int(shape[axis])) != shape[axis]:
                    raise InterpError(f"`{func.name}` parameter `{param.name}`: dimension {dim.name} is "
                                      f"{shape[axis]} here but {bound[dim.name]} in an earlier argument")


def dynamic_value(value: Any, name: str) -> Any:
    """`value` of a name read as a value; an unbound DynamicDim is an InterpError."""
    if isinstance(value, DynamicDim):
        raise InterpError(f"pl.dynamic dimension `{name}` has no value: no argument's shape binds it")
    return value
