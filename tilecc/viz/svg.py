"""DOT -> SVG with the same Graphviz the pages embed (viz-js), run under node.

Contract: `dot_to_svg(dot, nodes)` returns the SVG text, or raises TileccError with one
line: node or the viz-js package missing, a graph of more than SVG_NODE_LIMIT nodes (dot's
layout is superlinear: see tilecc/viz/__init__.py; write .html or .dot instead), a layout
that takes longer than SVG_TIMEOUT seconds, or Graphviz's own error.
"""

from __future__ import annotations

import shutil
import subprocess

from tilecc.errors import TileccError
from tilecc.viz.assets import missing_viz_js_note, viz_js_module

SVG_NODE_LIMIT = 500
SVG_TIMEOUT = 120

# reads DOT on stdin, writes SVG on stdout; Graphviz's errors go to stderr, exit 1
_RUNNER = """
const { instance } = await import(process.argv[1]);
let dot = "";
for await (const chunk of process.stdin) dot += chunk;
const viz = await instance();
const result = viz.render(dot, { format: "svg" });
if (result.status !== "success") {
  console.error(result.errors.map(e => e.message).join("; "));
  process.exit(1);
}
process.stdout.write(result.output);
"""


def dot_to_svg(dot: str, nodes: int) -> str:
    if nodes > SVG_NODE_LIMIT:
        raise TileccError(f"{nodes} instructions are too many for one SVG layout (limit "
                          f"{SVG_NODE_LIMIT}); write .html (lays out neighbourhoods) or .dot")
    node = shutil.which("node")
    if node is None:
        raise TileccError("SVG output runs Graphviz (viz-js) under node, which is not on PATH; "
                          "write .html or .dot instead")
    module = viz_js_module()
    if not module.is_file():
        raise TileccError(missing_viz_js_note())
    try:
        done = subprocess.run([node, "--input-type=module", "-e", _RUNNER, module.as_uri()],
                              input=dot, capture_output=True, text=True, timeout=SVG_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise TileccError(f"Graphviz layout took longer than {SVG_TIMEOUT} s; write .html "
                          f"(lays out neighbourhoods) or .dot instead") from None
    if done.returncode != 0:
        raise TileccError(f"Graphviz: {done.stderr.strip().splitlines()[-1:] or ['failed']}")
    return done.stdout
