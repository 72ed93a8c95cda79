"""Errors a kernel author sees: located at the kernel's own source line.

Contract: every rule the frontend checks (partition dim over 128, shape mismatch, wrong
operand kind, an ALU op an instruction does not allow, a dtype an op does not accept) raises
KernelError. Its location is the innermost stack frame that is not inside `tilecc.nki`,
i.e. the line of the kernel (or of a helper the kernel called) that made the bad call, so
`str(err)` reads `kernel.py:12:5: error: nisa.tensor_scalar: ...` and the CLI shows the
line with a caret like any other ParseError. `kernel_failure(err)` does the same for an
exception the kernel's own Python raised (an assert, an AttributeError), at its line.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import sysconfig
import traceback
from pathlib import Path
from types import CodeType, FrameType

from tilecc.errors import ParseError

_PACKAGE_DIR = str(Path(__file__).resolve().parent) + os.sep
_TILECC_DIR = str(Path(__file__).resolve().parents[1]) + os.sep


class KernelError(ParseError):
    """A kernel broke an NKI instruction's contract; path/line/col point at the kernel's call."""


@functools.lru_cache(maxsize=1024)
def _inside_package(filename: str) -> bool:
    return str(Path(filename).resolve()).startswith(_PACKAGE_DIR)


def kernel_frame() -> FrameType | None:
    """The innermost frame whose code is not inside tilecc/nki (the kernel's)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _inside_package(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def kernel_source_line() -> str:
    frame = kernel_frame()
    return "" if frame is None else linecache.getline(frame.f_code.co_filename, frame.f_lineno)


@functools.lru_cache(maxsize=256)
def _positions(code: CodeType) -> tuple[tuple[int | None, int | None, int | None, int | None], ...]:
    """A code object's instruction positions, read once: every traced instruction asks for
    its kernel line, and a kernel function's table is long."""
    return tuple(code.co_positions())


def kernel_frame_location() -> tuple[str, int, int, str | None]:
    """(path, line, col, source line) of the innermost frame outside tilecc/nki."""
    frame = kernel_frame()
    if frame is None:
        return "<kernel>", 0, 0, None
    col = 0
    positions = _positions(frame.f_code)
    index = frame.f_lasti // 2
    if 0 <= index < len(positions) and (start := positions[index][2]) is not None:
        col = start + 1
    filename = frame.f_code.co_filename
    return filename, frame.f_lineno, col, linecache.getline(filename, frame.f_lineno) or None


def kernel_error(message: str) -> KernelError:
    """A KernelError for `message`, located at the kernel line currently executing."""
    path, line, col, source = kernel_frame_location()
    return KernelError(path, line, col, message, source_line=source)


# installed libraries (numpy, the standard library): a fault inside one is at the user's line
_LIBRARIES = tuple(sorted({sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")}))


def _inside_tilecc(filename: str) -> bool:
    """A frame of the command line or the package (never the kernel's own code)."""
    return str(Path(filename).resolve()).startswith(_TILECC_DIR)


def kernel_failure(err: BaseException, what: str = "the kernel raised",
                   path: str = "<kernel>") -> KernelError:
    """A KernelError at the innermost traceback frame of the user's code (the kernel's line):
    not inside tilecc and not Python's own `<frozen ...>` import machinery. Without such a
    frame (the compiler itself failed on the file) the error is at `path`."""
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if not _inside_package(f.filename) and not f.filename.startswith("<frozen ")
              and not _inside_tilecc(f.filename) and not f.filename.startswith(_LIBRARIES)]
    frame = frames[-1] if frames else None
    # a library's message may span lines (numpy's for a removed alias): its first line
    text = str(err).split("\n", 1)[0]
    message = f"{what} {type(err).__name__}: {text}"
    if frame is None:
        return KernelError(path, 0, 0, message)
    source = linecache.getline(frame.filename, frame.lineno or 0) or None
    col = (frame.colno or 0) + 1 if frame.colno is not None else 0
    return KernelError(frame.filename, frame.lineno or 0, col, message, source_line=source)
