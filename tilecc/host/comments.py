"""Source comments of host programs, found for the parser to attach (the printer writes
them back, tilecc/host/printer.py).

Contract: `CommentPool(text)` holds every `#` comment of Python source `text` that
`ast.parse` accepted, by line (1-based, lines ending at "\\n" as the tokenizer counts
them), with the text `tokenize` gives it (from `#` to the end of its line, no line break),
so a `#` inside a string is not a comment; `take(first, last)` removes and returns, in
source order, the comments on lines first..last, so each comment is attached to exactly
one place. The parser attaches comments to the statement they precede (comments on a
statement's own lines, such as a trailing `x = f()  # why`, go before it), to the
function or program they precede, or to the end of the module; pypto keeps comments
through its parser and passes the same way (leading comments).

Finding them: in Python 3.11 source every `#` outside a string literal starts a comment
and a string ends at the first unescaped closing quote whatever its prefix (f-strings
included: their fields can hold neither the quote nor a backslash), so one regular
expression over the text finds them, in C, at a small part of the cost of Python's
pure-Python tokenizer. From Python 3.12 (PEP 701) an f-string field may hold its own quotes
and the regular expression no longer knows where a string ends; the tokenizer, written in C
there, is used instead. tests/host/test_comments.py holds the two equal on every fixture.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize

# the leftmost string literal or comment: triple-quoted strings first, so `'''` is not an
# empty string and a quote; `\\.` takes an escaped character (a line break too) whole
_STRING_OR_COMMENT = re.compile(r"""
      '''(?:[^'\\]|\\.|'(?!''))*'''
    | \"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
    | '(?:[^'\\\n]|\\.)*'
    | "(?:[^"\\\n]|\\.)*"
    | (\#[^\r\n]*)
""", re.VERBOSE | re.DOTALL)
SCAN_WITH_REGEX = sys.version_info < (3, 12)


def comments_by_regex(text: str) -> dict[int, str]:
    out: dict[int, str] = {}
    line, counted = 1, 0
    for match in _STRING_OR_COMMENT.finditer(text):
        if (comment := match.group(1)) is not None:
            start = match.start()
            line += text.count("\n", counted, start)
            counted = start
            out[line] = comment
    return out


def comments_by_tokenizer(text: str) -> dict[int, str]:
    out: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string
    except (tokenize.TokenError, SyntaxError):
        # the ast parser reports malformed source with a position; comments are moot then
        return {}
    return out


class CommentPool:
    def __init__(self, text: str) -> None:
        self.by_line: dict[int, str] = {}
        if "#" not in text:   # nothing to find
            return
        self.by_line = comments_by_regex(text) if SCAN_WITH_REGEX else comments_by_tokenizer(text)

    def first_line(self, first: int, last: int) -> int | None:
        """The line of the first comment still held on lines first..last (None if none)."""
        return next((n for n in range(first, last + 1) if n in self.by_line), None) if self.by_line else None

    def take(self, first: int, last: int) -> tuple[str, ...]:
        return tuple(text for _, text in self.take_lines(first, last))

    def take_lines(self, first: int, last: int) -> tuple[tuple[int, str], ...]:
        """As `take`, each comment with its line."""
        by_line = self.by_line
        if not by_line or last < first:
            return ()
        if first == last:   # the usual call: the one line of a statement
            text = by_line.pop(first, None)
            return () if text is None else ((first, text),)
        if last - first > len(by_line):
            lines = sorted(n for n in by_line if first <= n <= last)
        else:
            lines = [n for n in range(first, last + 1) if n in by_line]
        return tuple([(n, by_line.pop(n)) for n in lines])
