"""Kernel source lines for the operators of a traced kernel, for the kernel report.

Contract: inside `stamping_positions()`, every statement the NKI tracer emits whose `pos` is
None gets `Pos(line, 0, filename)` of the innermost frame outside the tilecc package (the
kernel's line). Positions the tracer sets itself are
kept. The tracer's `Trace.emit` is wrapped for the duration only, so tracing outside the
block is untouched; the report re-traces the kernel under it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import tilecc
from tilecc.klr import ast
from tilecc.nki.tracer import Trace

_PACKAGE = str(Path(tilecc.__file__).resolve().parent) + "/"


def kernel_frame() -> FrameType | None:
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(_PACKAGE):
        frame = frame.f_back
    return frame


@contextmanager
def stamping_positions() -> Iterator[None]:
    emit = Trace.emit

    def stamped(self: Trace, stmt: ast.Stmt) -> None:
        if getattr(stmt, "pos", True) is None and (frame := kernel_frame()) is not None:
            stmt.pos = ast.Pos(frame.f_lineno, 0, filename=frame.f_code.co_filename)
        emit(self, stmt)
    Trace.emit = stamped  # type: ignore[method-assign]
    try:
        yield
    finally:
        Trace.emit = emit  # type: ignore[method-assign]
