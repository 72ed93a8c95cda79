"""Source comments of host programs: found by the parser, re-emitted by the printer.

Contract: `CommentPool(text)` holds every `#` comment of the source by line (found with
Python's tokenizer, so a `#` inside a string is not a comment); `take(first, last)`
removes and returns, in source order, the comments on lines first..last, so each comment
is attached to exactly one place. The parser attaches comments to the statement they
precede (comments on a statement's own lines, such as a trailing `x = f()  # why`, go
before it), to the function or program they precede, or to the end of the module; pypto
keeps comments through its parser and passes the same way (leading comments).

The printer renders programs with `ast.unparse`, which has no comments; it emits each
comment as a marker string statement (`marker(text)`) and `restore(source)` turns every
marker line back into the comment at the marker's indentation.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

MARK = "#tilecc-comment#"
# a marker first in a body is unparsed as a docstring, in triple quotes
_MARKER_LINE = re.compile(r"^(\s*)((\'\'\'|\"\"\"|\'|\")" + re.escape(MARK) + r".*\3)$")


class CommentPool:
    def __init__(self, text: str) -> None:
        self.by_line: dict[int, str] = {}
        if "#" not in text:   # the tokenizer is a sizeable share of parsing: skip it when it cannot matter
            return
        try:
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type == tokenize.COMMENT:
                    self.by_line[tok.start[0]] = tok.string
        except (tokenize.TokenError, SyntaxError):
            # the ast parser reports malformed source with a position; comments are moot then
            self.by_line = {}

    def first_line(self, first: int, last: int) -> int | None:
        """The line of the first comment still held on lines first..last (None if none)."""
        return next((n for n in range(first, last + 1) if n in self.by_line), None) if self.by_line else None

    def take(self, first: int, last: int) -> tuple[str, ...]:
        return tuple(text for _, text in self.take_lines(first, last))

    def take_lines(self, first: int, last: int) -> tuple[tuple[int, str], ...]:
        """As `take`, each comment with its line."""
        if not self.by_line or last < first:
            return ()
        if last - first > len(self.by_line):
            lines = sorted(n for n in self.by_line if first <= n <= last)
        else:
            lines = [n for n in range(first, last + 1) if n in self.by_line]
        return tuple((n, self.by_line.pop(n)) for n in lines)


def marker(text: str) -> ast.stmt:
    """A string statement that `restore` turns back into the comment `text`."""
    return ast.Expr(ast.Constant(MARK + text))


def restore(source: str) -> str:
    """Replace marker lines by their comments; drop the blank line `ast.unparse` puts
    between a comment and the decorated definition that follows it."""
    out: list[str] = []
    after_comment = False
    for line in source.split("\n"):
        match = _MARKER_LINE.match(line)
        if match is not None:
            out.append(match.group(1) + ast.literal_eval(match.group(2))[len(MARK):])
            after_comment = True
            continue
        if after_comment and not line.strip():
            continue
        after_comment = False
        out.append(line)
    return "\n".join(out)
