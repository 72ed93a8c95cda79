"""Loading a kernel for the command line: `kernel.py:function` and `--input NAME=FILE.npy`.

Contract: `load_kernel(target)` imports the file as a fresh module (its folder first on
sys.path, so sibling helper modules import; `neuronxcc.nki` and `nki` imports give
tilecc's frontend, tilecc/nki/shim.py `aliases`) and returns the named function (a @jit kernel
or a plain function; `FILE.py:fn[2,2]` launches it on an SPMD grid of at most
tilecc.limits' "grid" programs);
`--input` values are read by tilecc/commands/inputs.py, as every command reads them.
The file is compiled by tilecc/nki/kernel_source.py (`**` bounded, no .pyc written).
Every problem is a TileccError (an exception the kernel's own code raised is a KernelError
at its line, tilecc/nki/errors.py `kernel_failure`), never a traceback.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tilecc.errors import ParseError, TileccError
from tilecc.fileio import not_decodable
from tilecc.limits import beyond, cut, limit
from tilecc.nki.driver import JitKernel
from tilecc.nki.errors import kernel_failure
from tilecc.nki.kernel_source import KernelLoader
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
    if (programs := math.prod(grid)) > limit("grid"):
        raise beyond("grid", programs, cut(target))
    return path, function, grid


def load_kernel(target: str) -> Callable[..., Any]:
    path, function, grid = split_target(target)
    file = Path(path)
    if not file.is_file():
        raise TileccError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(file.stem, file,
                                                  loader=KernelLoader(file.stem, str(file)))
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
