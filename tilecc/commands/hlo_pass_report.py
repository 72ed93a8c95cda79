"""What `tilecc hlo-opt` says about each pass on stderr, as a PassPipeline listener.

Contract: `PassReport(form, verbose, changes)` is called by PassPipeline.run before and
after every pass, and `line(name, changed)` gives the pass's status line:
`NAME: changed` / `NAME: no change`, with `-v` followed by the number of matches the pass's
gate found (OpExpanderPass passes) and the time the pass ran (matching excluded, measured
with perf_counter around `run` only).
`changes` selects what else is printed for a pass that changed the module, in the output's
form (`form(module) -> text`): "computations" (`--print-changed`: only the computations
whose text changed, as they are after the pass) or "diff" (`--diff`: a unified diff of the
module before and after the pass). A pass that changed nothing prints nothing more.
"""

from __future__ import annotations

import difflib
import sys
import time
from collections.abc import Callable

from tilecc.hlo.ir import HloModule
from tilecc.passes.pass_base import HloPass, OpExpanderPass

CHANGES = ("computations", "diff")


class PassReport:
    def __init__(self, form: Callable[[HloModule], str], verbose: bool,
                 changes: str | None, label: str) -> None:
        assert changes is None or changes in CHANGES
        self.form = form
        self.verbose = verbose
        self.changes = changes
        self.label = label
        self._before = ""
        self._matches: int | None = None
        self._start = 0.0
        self.details: dict[str, str] = {}   # pass name -> the -v part of its status line

    def __call__(self, hlo_pass: HloPass, module: HloModule, when: str) -> None:
        if when == "before":
            if self.changes is not None:
                self._before = self.form(module)
            self._matches = len(hlo_pass.matches(module)) \
                if self.verbose and isinstance(hlo_pass, OpExpanderPass) else None
            self._start = time.perf_counter()
            return
        seconds = time.perf_counter() - self._start
        if self.verbose:
            matches = "" if self._matches is None else \
                f"{self._matches} match{'' if self._matches == 1 else 'es'}, "
            self.details[hlo_pass.name] = f" ({matches}{seconds * 1e3:.2f} ms)"
        if self.changes is None:
            return
        after = self.form(module)
        if after == self._before:
            return
        sys.stderr.write(self._changes(hlo_pass.name, module, self._before, after))

    def line(self, name: str, changed: bool) -> str:
        return f"{name}: {'changed' if changed else 'no change'}{self.details.get(name, '')}"

    def _changes(self, name: str, module: HloModule, before: str, after: str) -> str:
        if self.changes == "diff":
            return "".join(difflib.unified_diff(
                before.splitlines(keepends=True), after.splitlines(keepends=True),
                fromfile=f"{self.label} before {name}", tofile=f"{self.label} after {name}"))
        old = set(_computation_texts(before))
        changed = [text for text in _computation_texts(after) if text not in old]
        return f"// {self.label} after {name}: {len(changed)} computation(s) changed\n" + \
            "".join(text + "\n\n" for text in changed)


def _computation_texts(module_text: str) -> list[str]:
    """The printed computations of a module's text (each ends at a line `}`)."""
    texts: list[str] = []
    current: list[str] = []
    for line in module_text.split("\n"):
        if current or line.endswith("{") and not line.startswith(("HloModule", " ")):
            current.append(line)
            if line.startswith("}"):
                texts.append("\n".join(current))
                current = []
    return texts

