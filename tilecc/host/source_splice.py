"""Print a module after passes by keeping the source text of everything they left alone.

Contract: `print_keeping_source(text, before, after, path)` returns source for `after`,
where `before = parse_module(text)` and `after` is what passes made of it:
- `after is before` (no pass changed anything): `text` itself, byte for byte (spec 002:
  "If nothing changes the program is returned unchanged", and so is its file);
- only functions were replaced (programs, their function names and every other item as
  before, which is what SynthesizeAllReduceSignals does): `text` with the source lines of
  each replaced function's body (`Function.source_lines`) swapped for the new body: the
  source lines of every statement the passes kept (`Function.body_chunks`), the header
  and `else:` lines of a for / while / if / with whose bodies alone changed, the other
  statements printed by tilecc/host/printer.py at the indentation of their body; if more than
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
from collections.abc import Callable, Mapping
from typing import Any

from tilecc.errors import TileccError
from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.printer import print_body, print_function, print_module

Chunks = tuple[tuple[int, int], ...]


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
            lines[body - 1:last] = kept if kept is not None else _printed(print_body, new.body, indent)
        else:
            lines[first - 1:last] = _printed(print_function, new, _definition_indent(lines[first - 1:last]))
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
    """The lines of `new`'s body, keeping the source of what it shares with `old` (None
    if `old` has no source lines for its body)."""
    if old.body_chunks is None:
        return None
    return _splice_body(old.body, new.body, old.body_chunks, lines, indent)


def _splice_body(old: tuple[ir.Stmt, ...], new: tuple[ir.Stmt, ...], chunks_of: Mapping[int, Chunks],
                 lines: list[str], indent: str, may_print: bool = True) -> list[str] | None:
    """Each statement of `new` that is one of `old` (the same object: passes rebuild only
    what they change) as its source lines; a compound statement whose header is one of
    `old`'s with its header and `else:` lines kept and its bodies spliced the same way; the
    others printed (None instead with `may_print` false). A comment written on the lines
    of a statement comes with that statement's lines, or is printed above it if the
    statement is printed."""
    chunks = chunks_of.get(id(old))
    if chunks is None or len(chunks) != len(old):
        return None
    where = {id(stmt): index for index, stmt in enumerate(old)}
    present = {id(stmt) for stmt in new}
    # (index of the old statement whose kept lines make a segment unneeded, lines)
    segments: list[tuple[int | None, list[str]]] = []
    kept_headers: set[int] = set()
    matched = -1
    for stmt in new:
        index = where.get(id(stmt))
        carrier = None
        if index is not None:
            matched = index
            if chunks[index] != (0, 0):
                first, last = chunks[index]
                segments.append((None, lines[first - 1:last]))
                continue
            carrier = next((j for j in range(index + 1, len(old)) if not isinstance(old[j], ir.Comment)), None)
            if carrier is not None and id(old[carrier]) in present:
                continue
        elif (counterpart := next((j for j in range(matched + 1, len(old)) if same_compound_header(old[j], stmt)),
                                  None)) is not None and chunks[counterpart] != (0, 0):
            spliced = _splice_compound(old[counterpart], stmt, chunks[counterpart], chunks_of, lines)
            if spliced is not None:
                matched = counterpart
                kept_headers.add(counterpart)
                segments.append((None, spliced))
                continue
        if not may_print:
            return None
        segments.append((carrier, _printed(print_body, (stmt,), indent)))
    return [line for carrier, seg in segments if carrier is None or carrier not in kept_headers for line in seg]


def _splice_compound(old: ir.Stmt, new: ir.Stmt, chunk: tuple[int, int], chunks_of: Mapping[int, Chunks],
                     lines: list[str]) -> list[str] | None:
    """The lines of compound statement `new` from those of `old` (same header): the
    header and `else:` lines as written, each body spliced (None if one cannot be)."""
    out: list[str] = []
    position, last = chunk
    for old_body, new_body in zip(ir.child_bodies(old), ir.child_bodies(new)):
        if not old_body:
            if new_body:
                return None
            continue
        body_chunks = [c for c in chunks_of.get(id(old_body), ()) if c != (0, 0)]
        if not body_chunks:
            return None
        start, end = body_chunks[0][0], body_chunks[-1][1]
        out.extend(lines[position - 1:start - 1])
        if old_body is new_body:
            out.extend(lines[start - 1:end])
            position = end + 1
            continue
        # an `elif` (the else body holding one if) keeps its keyword only if nothing in it
        # is printed: a printed if would be a new statement, not the chain's next branch
        code = next((line.lstrip() for line in lines[start - 1:end] if line.strip()
                     and not line.lstrip().startswith("#")), "")
        elif_ = isinstance(old, ir.If) and old_body is old.orelse and code.startswith("elif")
        inner = _splice_body(old_body, new_body, chunks_of, lines, _definition_indent(lines[start - 1:end]),
                             may_print=not elif_)
        if inner is None:
            return None
        out.extend(inner)
        position = end + 1
    out.extend(lines[position - 1:last])
    return out


def same_compound_header(old: ir.Stmt, new: ir.Stmt) -> bool:
    """True for two for / while / if / with statements that differ at most in their bodies."""
    if isinstance(old, ir.For) and isinstance(new, ir.For):
        return (old.index, old.iter_args, old.iterable) == (new.index, new.iter_args, new.iterable)
    if isinstance(old, (ir.While, ir.If)) and type(new) is type(old):
        return old.cond == new.cond
    if isinstance(old, ir.With) and isinstance(new, ir.With):
        return (old.context, old.var) == (new.context, new.var)
    return False


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


def _printed(printer: Callable[[Any, str, str], str], item: Any, indent: str) -> list[str]:
    """The lines of `item` printed at `indent`; in a file indented with tabs (`indent` has
    one) each level is a tab, as Python refuses a block whose lines mix the two ambiguously."""
    return printer(item, indent, "\t" if "\t" in indent else "    ").split("\n")
