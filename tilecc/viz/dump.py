"""`hlo-opt --dump-dir DIR --dump-format=text,dot,html`: the pictures of each pass run.

Contract: `parse_dump_formats("text,dot,html")` is the set of formats (ValueError naming the
valid ones otherwise, for argparse). The pipeline always writes the text dumps
(`NN-<pass>.before.hlo` / `.after.hlo`, tilecc.passes.pass_base); the pictures are made from
them: `write_pass_dumps(dir, pipeline, formats, verdict)` writes, per pass run,
`NN-<pass>.before.dot` / `.after.dot` (tilecc.viz.hlo_dot.module_dot) for `dot`, and the
before / after page `NN-<pass>.html` for `html`, carrying the `--verify` verdict when it
ran. Returns the missing-engine note when a page was written without it, else None.
"""

from __future__ import annotations

from pathlib import Path

from tilecc.fileio import read_text, write_text_atomic
from tilecc.hlo.parser import parse_module
from tilecc.passes.pass_base import PassPipeline, lookup_pass
from tilecc.viz.hlo_dot import module_dot
from tilecc.viz.hlo_views import pass_section
from tilecc.viz.page import write_page
from tilecc.viz.pass_record import record_pass

DUMP_FORMATS = ("text", "dot", "html")


def parse_dump_formats(text: str) -> frozenset[str]:
    formats = frozenset(f.strip() for f in text.split(",") if f.strip())
    unknown = sorted(formats - set(DUMP_FORMATS))
    if unknown or not formats:
        raise ValueError(f"unknown dump format '{','.join(unknown) or text}'; expected a "
                         f"comma-separated list of {', '.join(DUMP_FORMATS)}")
    return formats


def write_pass_dumps(dump_dir: Path, pipeline: PassPipeline, formats: frozenset[str],
                     verdict: tuple[bool, str] | None = None) -> str | None:
    note = None
    for index, hlo_pass in enumerate(pipeline.passes, start=1):
        stem = dump_dir / f"{index:02d}-{hlo_pass.name}"
        before_path = f"{stem}.before.hlo"
        before_text = read_text(before_path)
        if "dot" in formats:
            for when in ("before", "after"):
                path = f"{stem}.{when}.hlo"
                module = parse_module(before_text if when == "before" else read_text(path), path)
                write_text_atomic(f"{stem}.{when}.dot", module_dot(module))
        if "html" in formats:
            run = record_pass(lookup_pass(hlo_pass.name), before_text, before_path,
                              read_text(f"{stem}.after.hlo"))
            note = write_page(f"{stem}.html", f"{hlo_pass.name}: {run.before.name}",
                              [pass_section(run, verdict)],
                              f"from {before_path}") or note
    return note
