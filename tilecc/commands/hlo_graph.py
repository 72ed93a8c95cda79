"""`tilecc hlo-graph IN.hlo -o g.svg|g.html|g.dot`: a picture of an HLO module.

Contract: reads HLO text (`-` = stdin); the output's suffix (or `--format`) picks the form:
`.dot` Graphviz DOT of the whole module (a cluster per computation, tilecc.viz.hlo_dot),
`.svg` that graph laid out by Graphviz (viz-js under node; modules up to
tilecc.viz.svg.SVG_NODE_LIMIT instructions), `.html` a self-contained page with one graph
per computation and every HLO line behind its node (large computations by neighbourhood).
`-o -` writes to stdout and then needs `--format`. Written atomically; bad input is one line
and exit 1; a page written without its layout engine says so in one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tilecc.errors import TileccError
from tilecc.fileio import read_text, refuse_overwriting, write_text_atomic
from tilecc.hlo.parser import parse_module

HELP = "draw an HLO module as Graphviz DOT, SVG or a self-contained HTML page"
FORMATS = ("dot", "svg", "html")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="HLO text file, or - for stdin")
    parser.add_argument("-o", "--output", required=True,
                        help="g.dot, g.svg or g.html (- = stdout, with --format)")
    parser.add_argument("--format", choices=FORMATS, help="output form (default: the suffix)")


def output_format(output: str, given: str | None) -> str:
    if given is not None:
        return given
    suffix = Path(output).suffix.lstrip(".").lower()
    if suffix not in FORMATS:
        raise TileccError(f"{output}: cannot tell the output form from the suffix "
                          f"'{suffix or '(none)'}'; expected .dot, .svg or .html, or --format")
    return suffix


def run(args: argparse.Namespace) -> int:
    form = output_format(args.output, args.format)
    refuse_overwriting(args.output, args.input, "HLO module")
    path = "<stdin>" if args.input == "-" else args.input
    text = read_text(args.input)
    module = parse_module(text, path)
    from tilecc.viz.hlo_dot import module_dot
    if form == "html":
        from tilecc.viz.hlo_views import module_section
        from tilecc.viz.page import write_page
        note = write_page(args.output, f"HLO module {module.name}",
                          [module_section(module, text=text)], f"from {path}")
        if note is not None:
            print(f"note: {note}", file=sys.stderr)
        return 0
    dot = module_dot(module)
    if form == "svg":
        from tilecc.viz.svg import dot_to_svg
        dot = dot_to_svg(dot, module.instruction_count())
    write_text_atomic(args.output, dot)
    return 0
