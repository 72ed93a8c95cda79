"""A self-contained HTML page: views (sections of JSON data) + the engine + the page script.

Contract:
- `Section(kind, data)` is one view (`module`, `pass`, `kernel`, or `text` for a plain
  block); `write_page(path, title, sections)` writes one HTML file holding every section,
  page.css, the layout engine (tilecc.viz.assets: viz-js, inlined) and page.js, atomically.
  The page requests nothing: no URL appears in it, and its Content-Security-Policy forbids
  any load (`default-src 'none'`), so it works offline in any browser.
- When the engine is not installed the page is still written (listings and details work)
  with the one-line note of `missing_viz_js_note()` at its top, and `write_page` returns
  that note so the command can print it; else it returns None.
- JSON is embedded in `<script type="application/json">` with `<`, `>` and `&` escaped,
  so no text from the input (HLO lines, kernel source) can end the script element.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from tilecc.fileio import write_text_atomic
from tilecc.viz.assets import missing_viz_js_note, viz_js_source

EAGER_LIMIT = 3000
"""Pages with at most this many graph nodes in all lay out every graph on load; larger
ones lay out what scrolls into view (and the page script never lays out a graph of more
than LAYOUT_LIMIT nodes whole)."""

_CSP = ("default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; "
        "style-src 'unsafe-inline'; img-src data:")


@dataclass(frozen=True, slots=True)
class Section:
    kind: str
    data: Any
    title: str = ""
    size: int = 0
    """How many graph nodes the view may lay out (for the eager / lazy choice)."""


@cache
def _package_text(name: str) -> str:
    return resources.files("tilecc.viz").joinpath(name).read_text(encoding="utf-8")


def embed_json(data: Any) -> str:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    for char, escape in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        if char in text:
            text = text.replace(char, escape)
    return text


def render_section(section: Section) -> str:
    heading = f"<h2>{html.escape(section.title)}</h2>\n" if section.title else ""
    if section.kind == "text":
        return f'{heading}<pre class="stage">{html.escape(str(section.data))}</pre>\n'
    return (f'{heading}<section data-view="{section.kind}"><script type="application/json">'
            f"{embed_json(section.data)}</script></section>\n")


def page_html(title: str, sections: list[Section], subtitle: str = "") -> tuple[str, str | None]:
    """The page text and the missing-engine note (None when the engine is embedded)."""
    engine = viz_js_source()
    note = None if engine is not None else missing_viz_js_note()
    eager = sum(s.size for s in sections) <= EAGER_LIMIT
    parts = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n',
             f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n',
             f"<title>{html.escape(title)}</title>\n<style>{_package_text('page.css')}</style>"
             f'</head>\n<body data-eager="{1 if eager else 0}">\n<h1>{html.escape(title)}</h1>\n']
    if subtitle:
        parts.append(f"<div>{html.escape(subtitle)}</div>\n")
    if note is not None:
        parts.append(f'<div class="note">{html.escape(note)}</div>\n')
    parts += [render_section(s) for s in sections]
    if engine is not None:
        parts.append(f"<script>{engine}</script>\n")
    parts.append(f"<script>{_package_text('page.js')}</script>\n</body></html>\n")
    return "".join(parts), note


def write_page(path: str, title: str, sections: list[Section], subtitle: str = "") -> str | None:
    text, note = page_html(title, sections, subtitle)
    write_text_atomic(path, text)
    return note
