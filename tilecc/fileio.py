"""Reading inputs and writing outputs the way every tilecc command does.

Contract: `-` means stdin / stdout (`--input` options: tilecc/commands/inputs.py). Outputs are written to a temporary file in the target's
directory and renamed over it, so a failure never leaves a truncated file and never
touches the input; the output gets the user's umask, or keeps an existing file's mode. Unreadable inputs become a TileccError with the path, not a traceback.
"""

from __future__ import annotations

import io
import tokenize
import json
import math
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from tilecc.errors import ParseError, TileccError


def read_text(path: str) -> str:
    """The file (or stdin) decoded as UTF-8 with universal newlines (CRLF and CR read as LF,
    as text-mode reads do); a byte that is not UTF-8 is a ParseError at its line and column
    (stdin too: the locale's decoder would let it through as a surrogate)."""
    text = decode_utf8(read_bytes(path), "<stdin>" if path == "-" else path)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def decode_utf8(data: bytes, path: str) -> str:
    """`data` as UTF-8 text, or a ParseError at the line and column of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise not_decodable(data, err, path) from None


def not_decodable(data: bytes, err: UnicodeDecodeError, path: str,
                  expected: str | None = None) -> ParseError:
    """The ParseError for `err`, raised decoding `data`, at the bad byte's line and column;
    `expected` replaces "not <ENCODING> text" in the message."""
    line = data.count(b"\n", 0, err.start) + 1
    col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
    what = expected or f"not {err.encoding.upper()} text"
    return ParseError(path, line, col, f"{what}: byte 0x{data[err.start]:02x} ({err.reason})")


def read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as err:
        raise TileccError(f"{path}: cannot read: {err.strerror or err}") from None


def write_text_atomic(path: str, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_dump(folder: Path, name: str, text: str,
               error: type[TileccError] = TileccError) -> None:
    """`text` as `folder/name` (a pass's before / after dump), creating the folder; a folder
    that cannot be made is an `error` naming it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise error(f"{folder}: cannot create dump directory: {err.strerror or err}") from None
    write_text_atomic(str(folder / name), text)


def write_bytes_atomic(path: str, data: bytes) -> None:
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    target = Path(path)
    if target.is_dir():  # os.replace would fail only after the data is written
        raise TileccError(f"{path}: cannot write: is a directory (expected a file name)")
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as err:
        raise TileccError(f"{path}: cannot write: {err.strerror or err}") from None
    try:
        os.fchmod(fd, _output_mode(target))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except OSError as err:  # disk full, the target turned into a directory meanwhile ...
        Path(tmp).unlink(missing_ok=True)
        raise TileccError(f"{path}: cannot write: {err.strerror or err}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _output_mode(target: Path) -> int:
    """The permissions an output gets: an existing file keeps its own, a new one gets what
    open() would give it under the user's umask (mkstemp's temporary file is 0600)."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def refuse_overwriting(output: str, source: str, what: str) -> None:
    """For a command whose output is in another format than its input (KLR from a kernel,
    BIR from KLR): writing the output over the input would destroy the only source."""
    if output == "-" or source == "-":
        return
    try:
        same = os.path.samefile(output, source)
    except OSError:  # one of them does not exist: nothing to destroy
        return
    if same:
        raise TileccError(f"{output}: is the input {what}; writing the output there would "
                          f"destroy it (expected another file name)")


def parse_json_text(text: str, path: str) -> Any:
    """`json.loads` whose failures are ParseErrors at the offending line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        lines = text.split("\n")   # json counts lines at "\n" only
        src = lines[err.lineno - 1] if 0 < err.lineno <= len(lines) else None
        raise ParseError(path, err.lineno, err.colno, f"invalid JSON: {err.msg}",
                         source_line=src) from None
    except RecursionError:
        raise ParseError(path, 0, 0, "JSON nested too deeply", field="$") from None


# what numpy raises for a malformed .npy: its header is a Python literal that it tokenizes
# and evaluates, so a cut header is a TokenError or SyntaxError, not a ValueError
NPY_HEADER_ERRORS = (ValueError, OSError, EOFError, SyntaxError, tokenize.TokenError)


def check_npy_size(handle: BinaryIO, size: int, path: str, what: str) -> None:
    """TileccError unless the .npy file of `size` bytes open in `handle` (at its start) holds
    all the data its header declares: checked before numpy allocates the array, so a
    header claiming 10^20 elements is refused, not attempted."""
    version = np.lib.format.read_magic(handle)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
        np.lib.format.read_array_header_2_0
    shape, _, dtype = read(handle)
    if any(d < 0 for d in shape):  # numpy's header reader lets them through to its mmap
        raise TileccError(f"{path}: {what}: the header declares the shape {list(shape)}; "
                          f"a dimension is never negative")
    needed = math.prod(shape) * dtype.itemsize
    held = size - handle.tell()
    if needed > held:
        raise TileccError(f"{path}: {what}: the header declares {dtype}{list(shape)}, "
                          f"{needed} bytes of data, but the file holds {held}")


NAME_MAX = 255   # bytes of one file name on Linux, macOS and Windows file systems


def write_npy_outputs(out_dir: str, arrays: Iterable[tuple[str, np.ndarray]],
                      describe: Callable[[np.ndarray], str] | None = None) -> None:
    """Write each (name, array) as `out_dir/<name>.npy` atomically and list it on stdout
    (`path: dtype[shape]`, then `describe(array)` when given).

    numpy writes ml_dtypes arrays (bf16, fp8) as raw records of the same size: read them back
    with `.view(ml_dtypes.bfloat16)` etc."""
    arrays = list(arrays)
    for name, _ in arrays:  # names come from the program: none may leave the folder
        if name in ("", ".", "..") or any(c in name for c in "/\\\0"):
            raise TileccError(f"output {name!r}: not usable as a file name (it is written as "
                              f"{out_dir}/<name>.npy)")
        if len(f"{name}.npy".encode()) > NAME_MAX:   # refused before any output is written
            raise TileccError(f"output {name[:40]!r}...: {len(name)} characters, too long for "
                              f"a file name ({NAME_MAX} bytes with .npy)")
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        raise TileccError(f"{out_dir}: is a file (expected a folder for the .npy outputs)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TileccError(f"{out_dir}: cannot create the output folder: "
                          f"{err.strerror or err}") from None
    for name, array in arrays:
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        path = folder / f"{name}.npy"
        write_bytes_atomic(str(path), buffer.getvalue())
        summary = f" {describe(array)}" if describe is not None else ""
        print(f"{path}: {array.dtype}{list(array.shape)}{summary}")
