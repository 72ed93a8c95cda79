"""Print a module after passes by keeping the source text of everything they left alone.

Contract: `print_keeping_source(text, before, after, path)` returns source for `after`,
where `before = parse_module(text)` and `after` is what passes made of it:
- `after is before` (no pass changed anything): `text` itself, byte for byte (spec 002:
  "If nothing changes the program is returned unchanged", and so is its file);
- only functions were replaced (programs, their function names and every other item as
  before, which is what SynthesizeAllReduceSignals does): `text` with the source lines of
  each replaced function's body (`Function.source_lines`) swapped for the new body: the
  source lines of every statement the passes kept (`Function.body_chunks`), the others
  printed by tilecc/host/printer.py at the indentation of the first statement; if more than
  the body changed or the body shares a line with the header, the whole function's lines
  (leading comments and decorators included) swapped for the function printed at the
  indentation of its first decorator; every other line, comment and blank line stays as
  written;
- anything else, or a splice that does not parse back to `after` (a file indented with
  tabs, say): `print_module(after)`, the whole module printed.
The result always parses back to a module equal to `after` (checked by parsing it, which
`verify=False` skips, for a caller that also skips the passes' round-trip checks).
"""

from __future__ import annotations

import dataclasses
import io
import tokenize

from tilecc.errors import TileccError
from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.printer import print_body, print_function, print_module


def print_keeping_source(text: str, before: ir.Module, after: ir.Module, path: str = "<string>",
                         verify: bool = True) -> str:
    if after is before:
        return text
    replaced = replaced_functions(before, after)
    if replaced is None:
        return print_module(after)
    lines = text.split("\n")
    for old, new in sorted(replaced, key=lambda pair: -_lines_of(pair[0])[0]):
        first, body, last = _lines_of(old)
        if body and same_header(old, new):
            indent = _definition_indent(lines[body - 1:last])
            kept = kept_statements(old, new, lines, indent)
            lines[body - 1:last] = kept if kept is not None else _indented(print_body(new.body), indent)
        else:
            lines[first - 1:last] = _indented(print_function(new), _definition_indent(lines[first - 1:last]))
    spliced = "\n".join(lines)
    if not verify:
        return spliced
    try:
        if parse_module(spliced, path) == after:
            return spliced
    except TileccError:
        pass
    return print_module(after)


def kept_statements(old: ir.Function, new: ir.Function, lines: list[str], indent: str) -> list[str] | None:
    """The lines of `new`'s body: the source lines of each statement it shares with `old`
    (the same object: passes rebuild only what they change), the others printed; a
    comment written on the lines of a statement comes with that statement's lines, or is
    printed above it if the statement is printed. None without `old.body_chunks`."""
    chunks = old.body_chunks
    if chunks is None or len(chunks) != len(old.body):
        return None
    where = {id(stmt): index for index, stmt in enumerate(old.body)}
    present = {id(stmt) for stmt in new.body}
    out: list[str] = []
    for stmt in new.body:
        index = where.get(id(stmt))
        if index is not None and chunks[index] == (0, 0):
            carrier = next((s for s in old.body[index + 1:] if not isinstance(s, ir.Comment)), None)
            if carrier is not None and id(carrier) in present:
                continue
            index = None
        if index is None:
            out.extend(_indented(print_body((stmt,)), indent))
        else:
            first, last = chunks[index]
            out.extend(lines[first - 1:last])
    return out


def same_header(old: ir.Function, new: ir.Function) -> bool:
    """True if only the body differs: the decorator, signature and docstring are kept as written."""
    return dataclasses.replace(old, body=new.body) == new


def _lines_of(func: ir.Function) -> tuple[int, int, int]:
    assert func.source_lines is not None, "replaced_functions only pairs parsed functions"
    return func.source_lines


def replaced_functions(before: ir.Module, after: ir.Module) -> list[tuple[ir.Function, ir.Function]] | None:
    """(old, new) for every function `after` replaced, or None when passes changed more
    than functions (or a replaced function has no source lines)."""
    if len(before.items) != len(after.items) or len(before.programs) != len(after.programs):
        return None
    pairs: list[tuple[ir.Function, ir.Function]] = []
    for old_item, new_item in zip(before.items, after.items):
        if isinstance(old_item, ir.Function) and isinstance(new_item, ir.Function):
            pairs.append((old_item, new_item))
        elif type(old_item) is not type(new_item):
            return None
        elif isinstance(old_item, ir.Verbatim) and isinstance(new_item, ir.Verbatim):
            if old_item.source != new_item.source:
                return None
    for old_prog, new_prog in zip(before.programs, after.programs):
        if (old_prog.name, old_prog.decorator, old_prog.doc, old_prog.decorated, old_prog.comments) != \
                (new_prog.name, new_prog.decorator, new_prog.doc, new_prog.decorated, new_prog.comments):
            return None
        if [f.name for f in old_prog.functions] != [f.name for f in new_prog.functions]:
            return None
        pairs.extend(zip(old_prog.functions, new_prog.functions))
    changed = [(old, new) for old, new in pairs if old is not new]
    if any(old.source_lines is None for old, _ in changed):
        return None
    return changed


def _definition_indent(lines: list[str]) -> str:
    """The indentation of the first line that is not blank or a comment (the decorator, or
    the first statement of a body)."""
    for line in lines:
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#"):
            return line[:len(line) - len(stripped)]
    return ""


def _indented(source: str, indent: str) -> list[str]:
    """`source` (printed at column 0, four spaces a level) indented by `indent`, except the
    continuation lines of multi-line string literals, whose text is the string's value. In
    a file indented with tabs (`indent` has one), each level is a tab, as Python refuses a
    block whose lines mix the two ambiguously."""
    lines = source.rstrip("\n").split("\n")
    if not indent:
        return lines
    inside_strings: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            inside_strings.update(range(tok.start[0] + 1, tok.end[0] + 1))
    out: list[str] = []
    for n, line in enumerate(lines, start=1):
        if not line or n in inside_strings:
            out.append(line)
            continue
        body = line.lstrip(" ")
        levels, extra = divmod(len(line) - len(body), 4)
        out.append(indent + ("\t" * levels + " " * extra if "\t" in indent else line[:len(line) - len(body)]) + body)
    return out
