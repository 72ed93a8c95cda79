"""Reading the HLO modules a command is given: files or stdin, every format, split or not.

Contract: `read_hlo_sources(paths, split)` returns one `HloSource` (where it came from and
its HLO text) per module, in order.
- No path, or `-`, is stdin (from a terminal, a line on stderr says so). Several paths are
  read one after the other.
- The format comes from the suffix -- `.pb` (HloModuleProto), `.mlir` / `.mlirbc`
  (StableHLO), `.pbtxt` / `.textproto` (HloModuleProto text) -- or, for other names and
  stdin, from the first bytes. Protos (binary and text) and StableHLO go through jaxlib
  (tilecc/hlo/xla_import.py). Anything else is HLO text (UTF-8).
- `split`: HLO text is cut at every `// -----` line (XLA's hlo-opt and mlir-opt
  `--split-input-file`); each piece is a module, labelled `FILE (module K)`. Without it, a
  separator line, or a second `HloModule` header, is an error at its line that names the
  flag (the parser alone would report a misleading "expected '{'").
- A KLR / BIR / Python file is named as such, with the command that takes it
  (commands/stages.py).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from tilecc.commands.stages import refuse_wrong_stage
from tilecc.errors import ParseError
from tilecc.fileio import decode_utf8, read_bytes
from tilecc.hlo.xla_import import hlo_text_through_xla

SEPARATOR = "// -----"
_SEPARATOR_LINE = re.compile(r"^//\s*-----[^\n]*$", re.MULTILINE)
_MODULE_HEADER = re.compile(r"^[ \t]*HloModule\b", re.MULTILINE)
_BY_SUFFIX = {".pb": "proto", ".mlir": "stablehlo", ".mlirbc": "stablehlo",
              ".pbtxt": "prototext", ".textproto": "prototext"}
_MLIR_BYTECODE = b"ML\xefR"
_MLIR_TEXT = re.compile(rb"^\s*(module\b|func\.func\b|#loc|\"builtin\.module\")")
_PROTO_TEXT = re.compile(rb"^\s*(name|id|entry_computation_name|computations|hlo_module)\s*[:{]")


@dataclass(frozen=True, slots=True)
class HloSource:
    label: str   # the path as given (`<stdin>` for stdin), with the module number when split
    text: str


def read_hlo_sources(paths: list[str], split: bool) -> list[HloSource]:
    sources: list[HloSource] = []
    if not paths and sys.stdin.isatty():   # a bare `tilecc hlo-opt` waits for the terminal
        print("reading an HLO module from stdin (end it with Ctrl-D; or give IN.hlo)",
              file=sys.stderr)
    for given in paths or ["-"]:
        path = "<stdin>" if given == "-" else given
        refuse_wrong_stage(given, "hlo-opt")
        text = hlo_text_of(read_bytes(given), path)
        pieces = split_modules(text, path) if split else [_single_module(text, path)]
        if len(pieces) == 1:
            sources.append(HloSource(path, pieces[0]))
        else:
            sources += [HloSource(f"{path} (module {k})", piece)
                        for k, piece in enumerate(pieces, start=1)]
    return sources


def hlo_text_of(data: bytes, path: str) -> str:
    """HLO text of a file in any format read (see the module docstring)."""
    form = next((f for suffix, f in _BY_SUFFIX.items() if path.endswith(suffix)), None) \
        or _sniff(data)
    if form is not None:
        return hlo_text_through_xla(data, form, path)
    text = decode_utf8(data, path)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _sniff(data: bytes) -> str | None:
    head = data[:4096]
    if head.startswith(_MLIR_BYTECODE) or _MLIR_TEXT.match(head):
        return "stablehlo"
    if _PROTO_TEXT.match(head):
        return "prototext"
    # HloModuleProto's field 1 is the module name: a binary proto starts with tag 0x0a
    if head[:1] == b"\x0a" and not head.lstrip().startswith(b"HloModule"):
        try:
            head.decode("utf-8")
        except UnicodeDecodeError:
            return "proto"
    return None


def split_modules(text: str, path: str) -> list[str]:
    """The modules between `// -----` lines; every piece must hold exactly one module."""
    pieces: list[str] = []
    start = 0
    for match in [*_SEPARATOR_LINE.finditer(text), None]:
        end = len(text) if match is None else match.start()
        line = text.count("\n", 0, start) + 1
        if not text[start:end].strip():
            raise ParseError(path, line, 1, f"no module before the '{SEPARATOR}' separator"
                             if match is not None else f"no module after the last '{SEPARATOR}'")
        pieces.append(_single_module(text[start:end], path, line - 1))
        if match is not None:
            start = match.end() + 1
    return pieces


def _single_module(text: str, path: str, line_offset: int = 0) -> str:
    """`text` unchanged when it holds one module; a ParseError at a separator or a second
    header otherwise. Line numbers of later errors stay the file's: the text before the piece
    is kept as blank lines."""
    if (sep := _SEPARATOR_LINE.search(text)) is not None:
        raise ParseError(path, line_offset + text.count("\n", 0, sep.start()) + 1, 1,
                         f"a '{SEPARATOR}' separator: the file holds several modules "
                         f"(give --split-input-file)")
    headers = list(_MODULE_HEADER.finditer(text))
    if len(headers) > 1:
        at = line_offset + text.count("\n", 0, headers[1].start()) + 1
        raise ParseError(path, at, 1, f"a second HloModule: separate modules with a "
                         f"'{SEPARATOR}' line and give --split-input-file")
    return "\n" * line_offset + text
