"""Source positions of Python statements, as the host parser needs them.

Contract: pure functions of an ast node (and the file's lines); line numbers are 1-based
as in `ast`. Used to place comments and to keep code outside programs as its own text.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator


def dotted(node: ast.expr) -> str | None:
    """`a.b.c` -> "a.b.c" for a chain of attributes over a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def first_line(node: ast.stmt) -> int:
    """The first source line of a statement, its decorators included."""
    decorators = getattr(node, "decorator_list", None)
    return min([node.lineno] + [d.lineno for d in decorators or ()])


def header_end(node: ast.stmt) -> int:
    """The last line of a statement, or of a compound statement's header (its `:` line is
    not known to ast; the header expression's last line stands for it)."""
    if isinstance(node, (ast.For, ast.While, ast.If)):
        header = node.iter if isinstance(node, ast.For) else node.test
        return header.end_lineno or node.lineno
    if isinstance(node, ast.With):
        return max(i.context_expr.end_lineno or node.lineno for i in node.items)
    return node.end_lineno or node.lineno


def line_shared_after(lines: list[str], node: ast.stmt) -> bool:
    """True if code follows the statement on its last line (`a = 1; b = 2`)."""
    end = node.end_lineno or node.lineno
    # end_col_offset counts UTF-8 bytes
    rest = lines[end - 1].encode()[node.end_col_offset or 0:].decode(errors="replace") if 0 < end <= len(lines) else ""
    return bool(rest.split("#", 1)[0].strip())


def preorder(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and everything below it, parents before children, in source order."""
    yield node
    for child in ast.iter_child_nodes(node):
        yield from preorder(child)


# after `program`: only spaces, line continuations and comments, then `(`; a text without
# that has no `pl.program(Cls)` call, so its tree need not be walked
_AFTER_PROGRAM = re.compile(r"(?:[\s\\]|#[^\n]*)*\(")


def _may_call_program(text: str) -> bool:
    """True if `program` followed by `(` occurs as a word (found by str.find, which is
    much faster than a regular expression searching for a word boundary everywhere)."""
    start = text.find("program")
    while start >= 0:
        end = start + len("program")
        if not (start and (text[start - 1].isalnum() or text[start - 1] == "_")) \
                and _AFTER_PROGRAM.match(text, end):
            return True
        start = text.find("program", end)
    return False


def program_call_names(tree: ast.Module, text: str) -> set[str]:
    """Names of classes the file `text` (parsed as `tree`) turns into programs by calling
    `pl.program(Cls)`."""
    names: set[str] = set()
    if not _may_call_program(text):
        return names
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and dotted(node.func) == "pl.program" and len(node.args) == 1
                and isinstance(node.args[0], ast.Name)):
            names.add(node.args[0].id)
    return names
