"""What an HLO instruction's metadata says about where it came from, for the pictures.

Contract: `source_of(inst, frames)` reads the instruction's verbatim `metadata={...}` text and
returns its op_name and source position: `source_file` / `source_line` when the metadata has
them, else the innermost frame of `stack_frame_id` resolved through the module's
FileNames / FileLocations / StackFrames block (jax writes positions that way). `frames` is
`StackFrames.parse(module.stack_frames)`, built once per module. Nothing here raises on
odd metadata: a field that is missing or malformed is simply absent from the result.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from tilecc.hlo.ir import HloInstruction

_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s}]+)')
_ROW = re.compile(r"(\d+)\s+(.*)")


class Source(NamedTuple):   # a tuple: one is made per instruction of every page
    op_name: str | None = None
    file: str | None = None
    line: int | None = None
    function: str | None = None

    def position(self) -> str | None:
        """`file:line`, with the function in parentheses when known; None without a file."""
        if self.file is None:
            return None
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return where if self.function is None else f"{where} ({self.function})"


def metadata_fields(metadata: str | None) -> dict[str, str]:
    """`{op_name="a" source_line=3}` -> {"op_name": "a", "source_line": "3"} (quotes removed)."""
    if not metadata:
        return {}
    fields: dict[str, str] = {}
    for key, value in _FIELD.findall(metadata):
        if value.startswith('"'):
            value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        fields[key] = value
    return fields


class StackFrames:
    """The module's stack-frame tables: frame id -> (file, line, function)."""

    def __init__(self) -> None:
        self.files: dict[int, str] = {}
        self.functions: dict[int, str] = {}
        self.locations: dict[int, dict[str, str]] = {}
        self.frames: dict[int, dict[str, str]] = {}

    @staticmethod
    def parse(block: str | None) -> StackFrames:
        tables = StackFrames()
        section = ""
        for raw in (block or "").splitlines():
            line = raw.strip()
            if line in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
                section = line
                continue
            if (row := _ROW.fullmatch(line)) is None:
                continue
            key, rest = int(row.group(1)), row.group(2)
            if section == "FileNames":
                tables.files[key] = rest.strip('"')
            elif section == "FunctionNames":
                tables.functions[key] = rest.strip('"')
            elif section == "FileLocations":
                tables.locations[key] = metadata_fields(rest)
            elif section == "StackFrames":
                tables.frames[key] = metadata_fields(rest)
        return tables

    def resolve(self, frame_id: int) -> Source:
        frame = self.frames.get(frame_id)
        if frame is None:
            return Source()
        location = self.locations.get(_int(frame.get("file_location_id")) or -1, {})
        line = _int(location.get("line"))
        return Source(file=self.files.get(_int(location.get("file_name_id")) or -1),
                      line=line, function=self.functions.get(
                          _int(location.get("function_name_id")) or -1))


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


# literal prefixes (no \b) and unrolled string bodies: re finds these by a fast scan
_OP_NAME = re.compile(r'op_name="([^"\\]*(?:\\.[^"\\]*)*)"')
_SOURCE_FILE = re.compile(r'source_file="([^"\\]*(?:\\.[^"\\]*)*)"')
_SOURCE_LINE = re.compile(r"source_line=(\d+)")
_FRAME_ID = re.compile(r"stack_frame_id=(\d+)")
_NO_SOURCE = Source()


def _unquote(text: str) -> str:
    return text.replace('\\"', '"').replace("\\\\", "\\") if "\\" in text else text


def source_of(inst: HloInstruction, frames: StackFrames) -> Source:
    """Three targeted searches instead of metadata_fields: this runs once per instruction
    of every page."""
    metadata = inst.metadata
    if not metadata:
        return _NO_SOURCE
    op_name = _unquote(m.group(1)) if (m := _OP_NAME.search(metadata)) else None
    if (file := _SOURCE_FILE.search(metadata)) is not None:
        line = _SOURCE_LINE.search(metadata)
        return Source(op_name, _unquote(file.group(1)), int(line.group(1)) if line else None)
    if (frame := _FRAME_ID.search(metadata)) is not None:
        found = frames.resolve(int(frame.group(1)))
        return Source(op_name, found.file, found.line, found.function)
    return Source(op_name)
