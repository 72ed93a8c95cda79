"""A bound on how deeply a host program nests, checked before anything recurses over it.

Contract: `parse_source(text, path)` is `ast.parse` for the host parser: a syntax error, or
a program nesting deeper than tilecc.limits' "depth" bound (statements in statements,
expressions in expressions: `1+1+...+1`, `- - -x`, `[[[...]]]`), is a ParseError at the
line and column where the bound is crossed, so the recursive parser, printer and
`ast.unparse` never exceed Python's recursion limit. The walk that measures depth is
iterative; a bound raised above the default raises Python's recursion limit to match.
CPython's own parser gives up (RecursionError or MemoryError) on an expression
of a few thousand levels; that too is a located ParseError, at the logical line holding
the most operators and brackets.
"""

from __future__ import annotations

import ast
import sys
import warnings

from tilecc.errors import ParseError
from tilecc.limits import LIMITS, limit


# Every ast node below a statement but two takes at least one source character of its own
# (an operator, a bracket, a comma, a dot, a name): the exceptions are the `Expr` wrapper of
# an expression statement and `arguments`, under a `lambda` of six characters, and the
# leaves (`Load`, `Add`, ...). So a one-line statement of C characters (UTF-8 bytes, at
# least as many) is at most C + 2 levels deep; the walk below skips such statements whole.
SPAN_SLACK = 3


def parse_source(text: str, path: str, lines: list[str]) -> ast.Module:
    try:
        with warnings.catch_warnings():   # `"\e"` and the like: Python's business, not ours
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as err:
        line = err.lineno or 1
        source = lines[line - 1] if 0 < line <= len(lines) else None
        raise ParseError(path, line, err.offset or 1, f"invalid Python syntax: {err.msg}",
                         source_line=source) from None
    except (RecursionError, MemoryError):
        line = _busiest_line(text)
        source = lines[line - 1] if 0 < line <= len(lines) else None
        raise ParseError(path, line, 1, "an expression nests deeper than Python's parser can "
                         "read (thousands of levels); split it into several statements",
                         source_line=source) from None
    check_depth(tree, path, lines)
    return tree


def check_depth(tree: ast.AST, path: str, lines: list[str]) -> None:
    """ParseError at the first node below `limit("depth")` levels (nodes without a
    position, such as `ast.Load`, are placed at their nearest ancestor's)."""
    bound = limit("depth")
    if bound > LIMITS["depth"].default:
        # the parser, printer and ast.unparse take a few Python frames per level: the
        # default bound fits Python's default recursion limit, a raised one needs more
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * bound + 1000))
    stack: list[tuple[ast.AST, int, int, int]] = [(tree, 0, 1, 1)]
    while stack:
        node, depth, line, col = stack.pop()
        if isinstance(node, (ast.expr, ast.stmt)):
            line, col = node.lineno, node.col_offset + 1
            if (isinstance(node, ast.stmt) and node.end_lineno == line and node.end_col_offset is not None
                    and depth + (node.end_col_offset - node.col_offset) + SPAN_SLACK <= bound):
                continue   # a one-line statement shorter than the bound cannot nest past it
        if depth > bound:
            entry = LIMITS["depth"]
            source = lines[line - 1] if 0 < line <= len(lines) else None
            raise ParseError(path, line, col, f"the program nests more than {bound} levels "
                             f"deep, the limit on {entry.what}; {entry.how_to_raise()}",
                             source_line=source)
        stack.extend((child, depth + 1, line, col) for child in ast.iter_child_nodes(node))


# the characters of Python's operators and brackets, deleted by str.translate to count them
_OPERATOR_CHARS = str.maketrans("", "", "+-*/%&|^~<>=@([{!,.:")


def _busiest_line(text: str) -> int:
    """The line with the most operator and bracket characters. Counted per physical line
    with str.translate (C speed): Python's tokenizer, pure Python, took seconds on the
    megabytes of `1+1+...` that make CPython's parser give up."""
    best, best_count = 1, -1
    for number, line in enumerate(text.splitlines(), 1):
        count = len(line) - len(line.translate(_OPERATOR_CHARS))
        if count > best_count:
            best, best_count = number, count
    return best
