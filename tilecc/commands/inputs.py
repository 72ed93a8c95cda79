"""The one reader of `--input NAME=VALUE` that every command uses (run, sim, trace, hlo-opt).

Contract: `read_inputs(specs, resolve, kinds)` returns {key: value} for the given options,
by the same rules whatever the command:
- Each option is `NAME=VALUE`; a NAME given twice is an error (never "the last one wins").
  `resolve(NAME)` gives the command's key for it (a parameter number, a tensor name) or a
  TileccError message naming the valid names.
- VALUE is, in this order: an existing `.npy` file -- a plain numeric array (the header is
  checked; pickles, object arrays, .npz and text are refused) -- or, where the command
  takes them (`kinds`), a number (a scalar kernel argument: `eps=1e-5`) or a shape
  `DTYPE[d0,d1,...]` in HLO spelling or numpy's (`f32[256,96]`, `bfloat16[128,64]`), which
  gives a shape and dtype without data (`tilecc trace`). Anything else names the file that
  is missing or what the command accepts.
- `typed(value, want)` is the array in the dtype a command expects: numpy writes bfloat16 /
  fp8 arrays as raw records of the same size ('<V2' / '|V1'), which are read back as
  `want`; without an expected dtype, 2-byte records are bfloat16 and 1-byte records an
  error (three fp8 formats share that size).
Every problem is one TileccError line starting `--input NAME:`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import ml_dtypes
import numpy as np

from tilecc.errors import TileccError
from tilecc.fileio import NPY_HEADER_ERRORS, check_npy_size
from tilecc.hlo.types import TYPE_BY_NAME, numpy_dtype

ARRAY, NUMBER, SHAPE = "array", "number", "shape"
_SHAPE = re.compile(r"([A-Za-z][A-Za-z0-9_]*)\[(\s*\d+(?:\s*,\s*\d+)*\s*)?\]")


@dataclass(frozen=True, slots=True)
class ShapeSpec:
    """An argument given by shape and dtype only (`NAME=f32[256,96]`)."""
    shape: tuple[int, ...]
    dtype: np.dtype


InputValue = Union[np.ndarray, int, float, ShapeSpec]
Resolver = Callable[[str], object]


def read_inputs(specs: list[str], resolve: Resolver, kinds: tuple[str, ...] = (ARRAY,),
                mmap: bool = False) -> dict[object, tuple[str, InputValue]]:
    """key -> (NAME as given, value) for every option, in the order given."""
    given: dict[object, tuple[str, InputValue]] = {}
    names: set[str] = set()
    for spec in specs:
        name, value = split_input_spec(spec)
        if name in names:
            raise TileccError(f"--input {name}: given twice (give each input once)")
        names.add(name)
        key = resolve(name)
        if key in given:
            raise TileccError(f"--input {name}: the same input as --input {given[key][0]}")
        given[key] = (name, input_value(name, value, kinds, mmap))
    return given


def split_input_spec(spec: str) -> tuple[str, str]:
    name, sep, value = spec.partition("=")
    if not sep or not name or not value:
        raise TileccError(f"--input {spec!r}: expected NAME=FILE.npy")
    return name, value


def input_value(name: str, value: str, kinds: tuple[str, ...], mmap: bool) -> InputValue:
    if Path(value).is_file() or value.endswith(".npy"):
        return load_array(name, value, mmap)
    if NUMBER in kinds and (number := _number(value)) is not None:
        return number
    if (shape := shape_spec(value)) is not None:
        if SHAPE not in kinds:
            raise TileccError(f"--input {name}: {value} is a shape without values; this "
                              f"command needs the data (NAME=FILE.npy); `tilecc trace` takes "
                              f"shapes")
        return shape
    accepted = ["FILE.npy"] + (["a NUMBER"] if NUMBER in kinds else []) + \
        (["a shape such as f32[128,64]"] if SHAPE in kinds else [])
    raise TileccError(f"--input {name}: {value}: no such file (expected {' or '.join(accepted)})")


def load_array(name: str, file: str, mmap: bool = False) -> np.ndarray:
    """A plain .npy array: np.load alone would take a pickle or a .npz as well, and its
    advice for a text file is to allow pickles."""
    try:
        with open(file, "rb") as handle:
            magic = handle.read(6)
            header = np.lib.format.read_array_header_1_0(handle) \
                if magic == b"\x93NUMPY" and handle.read(2)[:1] == b"\x01" else None
    except NPY_HEADER_ERRORS as err:
        raise TileccError(f"--input {name}: cannot read {file}: "
                          f"{getattr(err, 'strerror', None) or err}") from None
    if magic != b"\x93NUMPY":
        raise TileccError(f"--input {name}: {file} is not a .npy file (no NUMPY header)")
    if header is not None and header[2].hasobject:
        raise TileccError(f"--input {name}: {file} holds Python objects (dtype {header[2]}); "
                          f"tilecc reads numeric arrays only, never pickles")
    try:
        with open(file, "rb") as handle:
            check_npy_size(handle, os.fstat(handle.fileno()).st_size, file, f"--input {name}")
        return np.load(file, mmap_mode="r" if mmap else None, allow_pickle=False)
    except NPY_HEADER_ERRORS as err:
        raise TileccError(f"--input {name}: cannot read {file}: {err}") from None


def typed(name: str, array: np.ndarray, want: np.dtype | None = None) -> np.ndarray:
    """`array` with raw records read as `want` (see the module docstring)."""
    if array.dtype.kind != "V" or array.dtype.names is not None:
        return array
    if want is not None and want.itemsize == array.dtype.itemsize:
        return array.view(want)
    if want is None and array.dtype.itemsize == 2:
        return array.view(ml_dtypes.bfloat16)
    raise TileccError(f"--input {name}: raw {array.dtype.itemsize}-byte records "
                      f"({array.dtype.str}), not a dtype tilecc can tell (bfloat16 files are "
                      f"2-byte records; fp8 files cannot be told apart: convert to float32)")


def shape_spec(text: str) -> ShapeSpec | None:
    """`f32[256,96]` (HLO's type names) or `float32[256,96]` (numpy / ml_dtypes names)."""
    if (match := _SHAPE.fullmatch(text.strip())) is None:
        return None
    type_name, dims = match.group(1), match.group(2) or ""
    dtype: np.dtype | None = None
    if (primitive := TYPE_BY_NAME.get(type_name)) is not None:
        try:
            dtype = numpy_dtype(primitive)
        except ValueError:   # tuple / token / opaque: no element values
            return None
    if dtype is None:
        try:
            dtype = np.dtype(getattr(ml_dtypes, type_name, type_name))
        except TypeError:
            return None
    return ShapeSpec(tuple(int(d) for d in dims.split(",") if d.strip()), dtype)


def _number(text: str) -> int | float | None:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return None
