"""Kernel source positions as error messages show them: `kernel.py:12:9 nl.exp`.

Contract: a position is (file, line, column) with a 1-based line and a 0-based column (as
Python's ast `col_offset` and KLR's `Pos.column`; line 0 = unknown). `describe` prints
`file:line:col` with a 1-based column, followed by the NKI call made there: the dotted name
called at that column of the source line (`nl.exp`, `nisa.tensor_scalar`), or, when the
statement there is no call (`t[...] = x`), the statement's text cut to 60 characters. The
source is read with linecache; a file that is gone gives the location alone. The BIR
simulator, the KLR interpreter and the profile all name kernel lines through this one
function.
"""

from __future__ import annotations

import os

import linecache
import re

_CALL = re.compile(r"\s*([A-Za-z_][\w.]*)\s*\(")
_LONGEST = 60


def nki_call(file: str, line: int, column: int) -> str:
    """The NKI call at (line, column) of `file`, or the statement there, or ""."""
    text = linecache.getline(file, line) if line > 0 else ""
    if not text:
        return ""
    if (match := _CALL.match(text, column)) is not None:
        return match.group(1)
    if (match := _CALL.search(text)) is not None and "=" not in text[:match.start()].split("(")[0]:
        return match.group(1)
    statement = text.strip()
    return statement if len(statement) <= _LONGEST else statement[:_LONGEST - 3] + "..."


def describe(file: str | None, line: int, column: int) -> str:
    """`file:line:col call` (col 1-based), or "" for an unknown position."""
    if line <= 0:
        return ""
    where = f"{_shown(file) if file else '<kernel>'}:{line}:{column + 1}"
    call = nki_call(file, line, column) if file else ""
    return f"{where} {call}" if call else where


def _shown(file: str) -> str:
    """A kernel file as the user named it: relative to the working folder when inside it."""
    try:
        relative = os.path.relpath(file)
    except ValueError:   # another drive
        return file
    return file if relative.startswith("..") else relative
