"""Reading inputs and writing outputs the way every tilecc command does.

Contract: `-` means stdin / stdout. Outputs are written to a temporary file in the target's
directory and renamed over it, so a failure never leaves a truncated file and never
touches the input. Unreadable inputs become a TileccError with the path, not a traceback.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tilecc.errors import TileccError


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise TileccError(f"{path}: cannot read: {getattr(err, 'strerror', None) or err}") from None


def read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as err:
        raise TileccError(f"{path}: cannot read: {err.strerror or err}") from None


def write_text_atomic(path: str, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str, data: bytes) -> None:
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as err:
        raise TileccError(f"{path}: cannot write: {err.strerror or err}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
