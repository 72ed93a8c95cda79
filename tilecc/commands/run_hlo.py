"""`tilecc run IN.hlo --replicas N [--partitions P] [--input NAME=FILE.npy ...] [--seed S]
[--save-inputs DIR] --out DIR`.

Contract: parses IN.hlo (or stdin for `-`), runs its entry computation with the numpy
interpreter on N replicas (default: the module's replica_count) times P partitions
(default: the module's num_partitions) devices, and writes DIR/out<k>.npy for each output k (the elements of a
tuple root are outputs 0, 1, ...; a non-tuple root is output 0), each with a leading
device axis (device = replica * partitions + partition; with one partition, the replica).
- `--input NAME=FILE.npy`: NAME is the parameter's name or `p<i>` (its number), or for a
  tuple parameter each array leaf's `NAME.K` (commands/parameter_leaves.py). An array
  shaped (devices, *dims) holds one slice per device; an array shaped exactly like the
  parameter is given to every device; anything else, an unknown name, a parameter given
  twice or a dtype other than the parameter's is a one-line error (exit 1). The options
  are read by commands/inputs.py, as every command reads them.
- Parameters without an input get seeded random values (random_inputs, `--seed`);
  `--save-inputs DIR` writes every parameter's values as DIR/<parameter name>.npy (a tuple
  parameter's leaves as DIR/<NAME.K>.npy; with the device axis, so
  `--input NAME=DIR/NAME.npy` gives them back).
- Each output file is written atomically; prints one summary line per output written.
- Before anything is allocated, every value's size on all devices is checked against
  tilecc.limits' "elements" bound, and the entry's steps on all devices against the "steps"
  bound; `--max-steps N` bounds the steps evaluated.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

import numpy as np

from tilecc.errors import InterpError, TileccError, VerifyError
from tilecc.commands.inputs import read_inputs as read_inputs_of
from tilecc.commands.inputs import typed
from tilecc.commands.outputs import write_results
from tilecc.commands.parameter_leaves import (Path, assemble, leaf_name, leaf_shape,
                                             leaves, split_leaf)
from tilecc.fileio import read_text
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.ir import HloInstruction, HloModule
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import entry_inputs
from tilecc.hlo.run_limits import check_run_sizes
from tilecc.hlo.types import Shape, numpy_dtype
from tilecc.limits import LimitError
from tilecc.mpi_launch import under_mpiexec


def run(args: argparse.Namespace) -> int:
    if args.check or args.keep_temps:
        raise TileccError("--check / --keep-temps apply to kernels (kernel.py:FUNCTION), "
                          "not to HLO modules")
    if getattr(args, "stats", False) or getattr(args, "profile", None) or getattr(args, "uninit", "error") != "error":
        raise TileccError("--uninit, --stats and --profile apply to kernels, not to HLO modules")
    if under_mpiexec():   # one process per block of devices: tilecc/commands/run_hlo_mpi.py
        return int(importlib.import_module("tilecc.commands.run_hlo_mpi").run(args))
    path = "<stdin>" if args.target == "-" else args.target
    module = parse_module(read_text(args.target), path)
    replicas = module.replica_count if args.replicas is None else args.replicas
    if replicas < 1:
        raise TileccError(f"--replicas must be at least 1, got {replicas}")
    partitions = module.num_partitions if args.partitions is None else args.partitions
    if partitions < 1:
        raise TileccError(f"--partitions must be at least 1, got {partitions}")
    devices = replicas * partitions
    check_sizes_of(path, module, devices, args.max_steps)
    given = read_inputs(module, list(args.input or []), devices)
    assert module.entry is not None
    try:   # a fault of the module (or a bound it reaches): name the file it came from
        inputs = entry_inputs(module, devices, np.random.default_rng(args.seed), given)
        if args.save_inputs:
            write_results(args.save_inputs, saved_inputs(module, inputs), "--save-inputs")
        outputs = evaluate_module(module, inputs, replicas, partitions, args.max_steps)
    except (InterpError, LimitError) as err:
        raise type(err)(f"{path}: {err}") from None
    write_results(args.out, ((f"out{k}", array) for k, array in enumerate(outputs)))
    return 0


def saved_inputs(module: HloModule, inputs: list[Any]) -> list[tuple[str, np.ndarray]]:
    """What --save-inputs writes: every array leaf of every parameter, by its input name."""
    assert module.entry is not None
    arrays = [leaf for p, value in zip(module.entry.parameters, inputs)
              for leaf in leaves(p.name, p.shape, value)]
    seen: set[str] = set()
    for name, _ in arrays:
        if name in seen:   # a parameter named like another's tuple leaf (`t.0` beside `t`)
            raise TileccError(f"--save-inputs: two inputs would be written as {name}.npy")
        seen.add(name)
    return arrays


def check_sizes_of(path: str, module: HloModule, devices: int,
                   max_steps: int | None = None) -> None:
    """check_run_sizes, its error naming the file the module came from."""
    try:
        check_run_sizes(module, devices, max_steps)
    except (LimitError, VerifyError, InterpError) as err:
        raise type(err)(f"{path}: {err}") from None


def read_inputs(module: HloModule, specs: list[str], devices: int) -> dict[int, Any]:
    """Parameter number -> value for every given parameter (commands/inputs.py): an
    (devices, *dims) array, or for a tuple parameter the tuple of its leaves
    (commands/parameter_leaves.py)."""
    assert module.entry is not None
    params = module.entry.parameters
    by_name = {p.name: p for p in params}

    def resolve(name: str) -> tuple[int, Path]:
        found = split_leaf(name, by_name)
        param, path = found if found is not None else (_numbered(params, name), ())
        if param is None:
            names = ", ".join(f"{p.name} (p{p.parameter_number})" for p in params) or "none"
            raise TileccError(f"--input {name}: no parameter of that name or number "
                              f"(parameters: {names})")
        return param.parameter_number or 0, path

    by_number = {p.parameter_number or 0: p for p in params}
    fitted: dict[int, Any] = {}
    tuples: dict[int, dict[Path, np.ndarray]] = {}
    for key, (name, array) in read_inputs_of(specs, resolve).items():
        assert isinstance(key, tuple) and isinstance(array, np.ndarray)  # arrays only here
        number, path = key
        param = by_number[number]
        shape = leaf_shape(param, path, name)
        if param.shape.is_tuple:
            leaf = _fit(leaf_name(param.name, path), shape, array, devices, name)
            tuples.setdefault(number, {})[path] = leaf
        else:
            fitted[number] = _fit(param.name, shape, array, devices, name)
    for number, given in tuples.items():
        fitted[number] = assemble(by_number[number], given, devices)
    return fitted


def _numbered(params: list[HloInstruction], name: str) -> HloInstruction | None:
    if len(name) > 1 and name[0] == "p" and name[1:].isdigit():
        number = int(name[1:])
        if number < len(params):
            return params[number]
    return None


def _fit(param: str, shape: Shape, array: np.ndarray, devices: int, name: str) -> np.ndarray:
    dtype = numpy_dtype(shape.element_type)
    array = typed(name, array, dtype)
    if array.dtype != dtype:
        raise TileccError(f"--input {name}: dtype {array.dtype}, but parameter {param} "
                          f"({shape}) needs {dtype}")
    if array.shape == (devices,) + shape.dims:
        return array
    if array.shape == shape.dims:
        return np.broadcast_to(array, (devices,) + shape.dims)
    raise TileccError(f"--input {name}: shape {list(array.shape)}, but parameter "
                      f"{param} ({shape}) needs {list(shape.dims)} (one value for every "
                      f"device) or {[devices, *shape.dims]} (one slice per device)")
