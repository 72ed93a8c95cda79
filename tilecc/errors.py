"""The exceptions tilecc raises for user errors.

Contract: every error a user can cause (bad input text, an invalid module, a pass
precondition, a codegen or simulator fault) is a TileccError. The command line catches
TileccError, prints `str(err)` (one line, plus for ParseError the offending source line and
a caret) and exits 1; anything else escaping is an internal bug and keeps its traceback.
"""

from __future__ import annotations


class TileccError(Exception):
    """Base of all user-facing errors; `str()` is the one-line message the CLI prints."""


class ParseError(TileccError):
    """Malformed input text or document.

    `path` is the file name (or "<string>"); `line` and `col` are 1-based, or 0 when the
    location is a field path inside a JSON / CBOR document, in which case `field` names it
    (e.g. `body[3].store.op.tensorScalar.op0`). `source_line` is the offending line's text,
    when known, so the CLI can show a caret under `col`.
    """

    def __init__(self, path: str, line: int, col: int, message: str, *,
                 field: str | None = None, source_line: str | None = None) -> None:
        self.path = path
        self.line = line
        self.col = col
        # one line, always: a value quoted from the input may hold a line break
        message = message.replace("\r", "\\r").replace("\n", "\\n")
        self.message = message
        self.field = field
        self.source_line = source_line
        super().__init__(self.location() + ": error: " + message)

    def location(self) -> str:
        if self.field is not None:
            return f"{self.path}:{self.field}"
        return f"{self.path}:{self.line}:{self.col}"

    def render(self) -> str:
        """The message, then the source line and a caret under the column when known. A long
        line (minified JSON, a generated kernel) is cut to SOURCE_WINDOW characters around
        the column, with `...` where it was cut, so one error never floods the terminal."""
        text = str(self)
        if self.source_line is None or self.col <= 0:
            return text
        line = self.source_line.rstrip("\r\n")
        start = max(0, min(self.col - 1 - SOURCE_WINDOW // 2, len(line) - SOURCE_WINDOW))
        shown = line[start:start + SOURCE_WINDOW]
        caret = self.col - 1 - start
        if start > 0:
            shown, caret = "..." + shown, caret + 3
        if start + SOURCE_WINDOW < len(line):
            shown += "..."
        return text + "\n" + shown + "\n" + " " * caret + "^"


# characters of the source line ParseError.render shows around the column
SOURCE_WINDOW = 160


class VerifyError(TileccError):
    """An IR that breaks an invariant of its level (shape mismatch, bad operand ...)."""


class PassError(TileccError):
    """A pass was asked to do something it cannot (unknown pass, failed precondition)."""


class CodegenError(TileccError):
    """KLR that the KLR -> BIR codegen rejects (unmapped enum, unsupported operand ...)."""


class SimError(TileccError):
    """A BIR program the simulator cannot execute (out-of-bounds access, bad partition ...)."""


class SimIndexError(SimError):
    """An index read from a tensor (an indirect DMA's row) points outside its tensor: the
    first such element, flat in row-major order, and the tensor's size in elements."""

    def __init__(self, message: str, element: int, size: int) -> None:
        super().__init__(message)
        self.element, self.size = element, size


class InterpError(TileccError):
    """An IR the interpreter cannot execute (unsupported opcode, bad inputs ...)."""


class OracleError(TileccError):
    """The external reference (XLA via jaxlib, the klr tool) is missing or failed."""
