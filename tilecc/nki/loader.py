"""Loading a kernel for the command line: `kernel.py:function` and `--input NAME=FILE.npy`.

Contract: `load_kernel(target)` imports the file as a fresh module (its folder first on
sys.path, so sibling helper modules import; `neuronxcc.nki` and `nki` imports give
tilecc's frontend, tilecc/nki/shim.py `aliases`) and returns the named function (a @jit kernel
or a plain function; `FILE.py:fn[2,2]` launches it on an SPMD grid);
`load_inputs(specs, fn, mmap)` maps each NAME to a numpy array (or to a number: a scalar
parameter) and checks NAME against the function's parameters, every parameter without a
default needing one.
Every problem is a TileccError (an exception the kernel's own code raised is a KernelError
at its line, tilecc/nki/errors.py `kernel_failure`), never a traceback.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from tilecc.errors import ParseError, TileccError
from tilecc.fileio import not_decodable, split_input_spec
from tilecc.nki.driver import JitKernel
from tilecc.nki.errors import kernel_failure
from tilecc.nki.shim import aliases


_GRID = re.compile(r"([A-Za-z_]\w*)\[(\d+(?:\s*,\s*\d+)*)\]")


def split_target(target: str) -> tuple[str, str, tuple[int, ...]]:
    """FILE.py:FUNCTION or FILE.py:FUNCTION[gx,gy] (an SPMD launch grid)."""
    path, sep, function = target.rpartition(":")
    grid: tuple[int, ...] = ()
    if (launch := _GRID.fullmatch(function)) is not None:
        function, grid = launch.group(1), tuple(int(n) for n in launch.group(2).split(","))
    if not sep or not path.endswith(".py") or not function.isidentifier() or 0 in grid:
        raise TileccError(f"{target}: expected FILE.py:FUNCTION or FILE.py:FUNCTION[GX,GY] "
                          f"(a launch grid of positive ints)")
    return path, function, grid


def load_kernel(target: str) -> Callable[..., Any]:
    path, function, grid = split_target(target)
    file = Path(path)
    if not file.is_file():
        raise TileccError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(file.stem, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.resolve().parent))
    try:
        with aliases():
            spec.loader.exec_module(module)
    except SyntaxError as err:
        if err.msg.startswith("(unicode error)"):  # a bad byte past the first two lines
            _check_utf8(file, path)
        if err.lineno is None and b"\0" in (data := file.read_bytes()):  # Python gives no place
            at = data.index(b"\0")
            raise ParseError(path, data.count(b"\n", 0, at) + 1, at - data.rfind(b"\n", 0, at),
                             "a NUL byte: not Python source") from None
        raise ParseError(path, err.lineno or 0, err.offset or 0, f"syntax error: {err.msg}",
                         source_line=err.text) from None
    except UnicodeDecodeError as err:  # importlib decodes the first two lines itself
        _check_utf8(file, path)
        raise TileccError(f"{path}: cannot read: {err}") from None
    except TileccError:
        raise
    except Exception as err:  # the module's own code failed while importing
        raise kernel_failure(err, f"importing {path} failed", path) from None
    finally:
        sys.path.remove(str(file.resolve().parent))
    kernel: object = getattr(module, function, None)
    if not callable(kernel):
        raise TileccError(f"{path}: no function {function!r}")
    if grid:
        return JitKernel(getattr(kernel, "fn", kernel), grid)
    return kernel


def _check_utf8(file: Path, path: str) -> None:
    """A ParseError at the first byte of `file` that is not UTF-8 (Python's own errors give
    a position within one line or string literal)."""
    data = file.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise not_decodable(data, err, path) from None


def load_inputs(specs: list[str], kernel: Callable[..., Any], mmap: bool = False) -> dict[str, Any]:
    """Each `NAME=FILE.npy` as an array; a scalar parameter (`pool_size`, `epsilon`) is given as
    `NAME=2` / `NAME=1e-5` (a number that is not a file name) or as a 0-d .npy file."""
    target = getattr(kernel, "fn", kernel)
    params = inspect.signature(target).parameters
    arrays: dict[str, Any] = {}
    for spec in specs:
        name, file = split_input_spec(spec)
        if name not in params:
            raise TileccError(f"--input {name}: {target.__name__} has no parameter {name!r} "
                              f"(parameters: {', '.join(params)})")
        if (number := _number(file)) is not None and not Path(file).exists():
            arrays[name] = number
            continue
        array = _load_npy(name, file, mmap)
        arrays[name] = array.item() if array.ndim == 0 else _ml_dtypes_view(name, file, array)
    missing = [p.name for p in params.values()
               if p.default is inspect.Parameter.empty and p.name not in arrays
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if missing:
        raise TileccError(f"{target.__name__}: no --input for parameter(s) {', '.join(missing)}")
    return arrays


def _load_npy(name: str, file: str, mmap: bool) -> np.ndarray:
    """A plain .npy array: np.load alone would take a pickle or a .npz as well, and its
    advice for a text file is to allow pickles."""
    try:
        with open(file, "rb") as handle:
            magic = handle.read(6)
            header = np.lib.format.read_array_header_1_0(handle) \
                if magic == b"\x93NUMPY" and handle.read(2)[:1] == b"\x01" else None
    except (OSError, ValueError) as err:
        raise TileccError(f"--input {name}: cannot read {file}: "
                          f"{getattr(err, 'strerror', None) or err}") from None
    if magic != b"\x93NUMPY":
        raise TileccError(f"--input {name}: {file} is not a .npy file (no NUMPY header)")
    if header is not None and header[2].hasobject:
        raise TileccError(f"--input {name}: {file} holds Python objects (dtype {header[2]}); "
                          f"tilecc reads numeric arrays only, never pickles")
    try:
        return np.load(file, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError, EOFError) as err:
        raise TileccError(f"--input {name}: cannot read {file}: {err}") from None


def _number(text: str) -> int | float | None:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return None


def _ml_dtypes_view(name: str, file: str, array: np.ndarray) -> np.ndarray:
    """numpy saves a bfloat16 array as raw 2-byte records ('<V2'): read it back as bfloat16,
    the only 2-byte dtype numpy cannot name. Raw 1-byte records are one of three fp8
    formats, which the file does not say."""
    if array.dtype.kind != "V" or array.dtype.names is not None:
        return array
    if array.dtype.itemsize == 2:
        return array.view(ml_dtypes.bfloat16)
    raise TileccError(f"--input {name}: {file} holds raw {array.dtype.itemsize}-byte records "
                      f"({array.dtype.str}), not a dtype tilecc can tell (bfloat16 files are "
                      f"2-byte records; fp8 files cannot be told apart: convert to float32)")
