"""Sharing the repeated tensor definitions of a KLR JSON text before decoding it.

Contract: `share_tensor_texts(text)` returns `(text2, shared)` or None. text2 is `text`
with the value of every `"simple":` key replaced by a marker string (one per distinct
definition text), and `shared` maps each marker, as decoded, to the decoded definition.
KLR HEAD inlines the whole TensorName at every use (`{"abstract": {"simple": {...}}}`), so
decoding text2 builds about a third of the objects of `text`; `klr.json_head` resolves a
marker wherever an Access `simple` is read. None (decode `text` itself) when the text
already contains the escape `\\u0000` that markers start with, or a value is not one
object that ends at its first `}}` (the compact form writers emit; other layouts just
take the plain path).

Why text2 means the same document: a `"` is either a string delimiter or escaped inside
a string. If the `"` starting `"simple":` opens a string, the `{` after the colon starts
that key's value; if it is escaped, the `"` after `simple` closes the string (a key) and
the `{` again starts a value outside any string; if it closes a string, `simple` is a bare
word and both texts are invalid. A value that `json.loads` accepts on its own ends where
the parser of the whole text ends it, so the replacement swaps one complete value for
another. A text that is invalid stays invalid, and the caller then decodes the original
text to report the error at its real line and column; a marker found where a tensor
cannot be (the decoder rejects it) also sends the caller back to the original text.
"""

from __future__ import annotations

import json
from typing import Any

SIMPLE = '"simple":'
NUL_ESCAPE = "\\u0000"  # the JSON escape of U+0000: markers are "\u0000<n>"


def share_tensor_texts(text: str) -> tuple[str, dict[str, Any]] | None:
    if NUL_ESCAPE in text:
        return None
    marks: dict[str, str] = {}
    out: list[str] = []
    find = text.find
    pos = 0
    start = find(SIMPLE)
    while start >= 0:
        value = start + len(SIMPLE)
        end = find("}}", value) + 2
        if end == 1 or text[value] != "{":
            return None
        obj = text[value:end]
        mark = marks.get(obj)
        if mark is None:
            mark = marks[obj] = f'"{NUL_ESCAPE}{len(marks)}"'
        out.append(text[pos:value])
        out.append(mark)
        pos = end
        start = find(SIMPLE, end)
    if not marks:
        return None
    out.append(text[pos:])
    shared: dict[str, Any] = {}
    for obj, mark in marks.items():
        try:
            shared[json.loads(mark)] = json.loads(obj)
        except (ValueError, RecursionError):
            return None
    return "".join(out), shared
