"""`tilecc demo --html report.html`: the whole demo as one page.

Contract: `write_demo_page(path, examples, stages)` runs the demo stages as `tilecc demo`
does (their text goes to stdout as usual and into the page, one block per stage) and adds
the pictures: for every module of the HLO stage, the before / after view of each pass in
pipeline order (the second pass starting from the first one's result); for the NKI stage,
the kernel report of its kernel with the simulated output against the kernel's numpy
reference (within the example's tolerance). Returns the demo's exit code (0 when every
stage passed).
"""

from __future__ import annotations

import importlib
import io
import sys
from pathlib import Path
from typing import TextIO

import numpy as np

from tilecc.demo_stages import nki as nki_stage
from tilecc.fileio import read_text
from tilecc.hlo.printer import print_module
from tilecc.nki.driver import run_traced, trace_kernel
from tilecc.passes.pass_base import PASS_REGISTRY
from tilecc.viz.hlo_views import pass_section
from tilecc.viz.kernel_views import check_outputs, kernel_section
from tilecc.viz.page import Section, write_page
from tilecc.viz.pass_record import record_pass


class _Tee(io.StringIO):
    def __init__(self, echo: TextIO) -> None:
        super().__init__()
        self.echo = echo

    def write(self, text: str) -> int:
        self.echo.write(text)
        return super().write(text)


def hlo_sections(examples: Path) -> list[Section]:
    sections: list[Section] = []
    for path in sorted((examples / "hlo").glob("*.hlo")):
        text = read_text(str(path))
        for info in sorted(PASS_REGISTRY, key=lambda i: -i.registry_order):
            run = record_pass(info, text, str(path))
            run.after_text = text = print_module(run.after)
            sections.append(pass_section(run, title=f"{path.name}: {run.pass_name}",
                                         prefix=f"s{len(sections)}"))
    return sections


def nki_section(examples: Path) -> Section:
    example = nki_stage.load_example(examples / nki_stage.KERNEL)
    inputs = example.make_inputs(np.random.default_rng(0))
    traced = trace_kernel(example.KERNEL, *inputs)
    arrays = {t.name: a for t, a in zip(traced.kernel.inputs, inputs)}
    got = run_traced(traced, arrays)[0]
    check = check_outputs([(traced.kernel.outputs[0].name, got, example.reference(*inputs))],
                          "numpy reference", example.TOLERANCE)
    return kernel_section(traced.kernel, check, f"{nki_stage.KERNEL}: source, KLR, BIR")


def write_demo_page(path: str, examples: Path, stages: list[str]) -> int:
    sections: list[Section] = []
    ok = True
    for name in stages:
        module = importlib.import_module(f"tilecc.demo_stages.{name}")
        out = _Tee(sys.stdout)
        print(f"== {module.TITLE}", file=out, flush=True)
        stage_ok = module.run_stage(examples, out)
        print(f"== {module.TITLE}: {'ok' if stage_ok else 'FAILED'}\n", file=out, flush=True)
        ok = ok and stage_ok
        sections.append(Section("text", out.getvalue(), module.TITLE))
        if stage_ok and name == "hlo":
            sections += hlo_sections(examples)
        if stage_ok and name == "nki":
            sections.append(nki_section(examples))
    if (note := write_page(path, "tilecc demo", sections, f"examples from {examples}")):
        print(f"note: {note}", file=sys.stderr)
    return 0 if ok else 1
