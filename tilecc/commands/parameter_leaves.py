"""The arrays of an HLO entry parameter as `tilecc run` names them on disk and on the
command line: a tuple parameter's array leaves are `NAME.K` (nested: `NAME.K.J`, K the
tuple index), an array parameter is `NAME`, and a token has no file (it carries no data).

Contract:
- `leaves(name, shape, value)` yields (leaf name, array) depth-first, in XLA's flattened
  parameter order; `--save-inputs` writes exactly these, so `--input LEAF=DIR/LEAF.npy`
  gives every one of them back.
- `split_leaf(name, by_name)` resolves a command-line name: a parameter's own name first
  (jax names parameters `Arg_0.1`: a dot alone does not make a leaf), else the longest
  prefix that names a tuple parameter, followed by `.K` indices (`leaf_shape` refuses a
  path its shape does not have, naming the leaves it has).
- `assemble(param, given, devices)` builds a tuple parameter's value from its given leaves;
  every array leaf must be given (a value half given, half drawn would depend on which
  leaves were named), tokens are filled in.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from tilecc.errors import TileccError
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.types import Shape

Path = tuple[int, ...]   # tuple indices from the parameter down to a leaf


def leaves(name: str, shape: Shape, value: Any) -> Iterator[tuple[str, np.ndarray]]:
    """(leaf name, array) for every array leaf of a parameter's value; see the contract."""
    if shape.is_token:
        return
    if not shape.is_tuple:
        yield name, value
        return
    for k, (sub, item) in enumerate(zip(shape.tuple_shapes, value)):
        yield from leaves(leaf_name(name, (k,)), sub, item)


def leaf_name(name: str, path: Path) -> str:
    return name + "".join(f".{k}" for k in path)


def array_leaf_paths(shape: Shape, prefix: Path = ()) -> Iterator[tuple[Path, Shape]]:
    if shape.is_tuple:
        for k, sub in enumerate(shape.tuple_shapes):
            yield from array_leaf_paths(sub, prefix + (k,))
    elif not shape.is_token:
        yield prefix, shape


def split_leaf(name: str, by_name: Mapping[str, HloInstruction]
               ) -> tuple[HloInstruction, Path] | None:
    """(parameter, leaf path) for a command-line name, or None; see the contract."""
    if name in by_name:
        return by_name[name], ()
    head = name
    path: Path = ()
    while "." in head:
        head, _, index = head.rpartition(".")
        if not index.isdigit():
            return None
        path = (int(index),) + path
        param = by_name.get(head)
        if param is not None and param.shape.is_tuple:
            return param, path   # leaf_shape says so if the path is not in its shape
    return None


def leaf_shape(param: HloInstruction, path: Path, name: str) -> Shape:
    """The array shape at `path`, or a one-line error naming what the parameter holds."""
    shape = _leaf_shape(param.shape, path)
    if shape is None or not shape.is_array:
        names = ", ".join(leaf_name(param.name, p)
                          for p, _ in array_leaf_paths(param.shape)) or "none"
        raise TileccError(f"--input {name}: parameter {param.name} has shape {param.shape}; "
                          f"give its array leaves (inputs: {names})")
    return shape


def assemble(param: HloInstruction, given: Mapping[Path, np.ndarray], devices: int) -> Any:
    """The value of a tuple parameter from all its array leaves; see the contract."""
    missing = [p for p, _ in array_leaf_paths(param.shape) if p not in given]
    if missing:
        names = ", ".join(leaf_name(param.name, p) for p in missing)
        raise TileccError(f"--input: tuple parameter {param.name} is given in part; give "
                          f"every array leaf (missing: {names})")
    return _build(param.shape, (), given, devices)


def _build(shape: Shape, path: Path, given: Mapping[Path, np.ndarray], devices: int) -> Any:
    if shape.is_tuple:
        return tuple(_build(sub, path + (k,), given, devices)
                     for k, sub in enumerate(shape.tuple_shapes))
    if shape.is_token:   # the interpreter's token (random_inputs.random_value)
        return np.zeros((devices, 0), np.bool_)
    return given[path]


def _leaf_shape(shape: Shape, path: Path) -> Shape | None:
    for k in path:
        if not shape.is_tuple or k >= len(shape.tuple_shapes):
            return None
        shape = shape.tuple_shapes[k]
    return shape
