"""Golden pass cases: `tests/passes/golden/*.hlo`, each an HLO module with its expectations.

Contract: a golden file holds `// PASSES: name[,name...]` (run in order), `// REPLICAS: n[,n]`
(the replica counts the semantic checks run it on; the header's replica_count is set to
each), the module text, and `// CHECK...:` lines (tests/passes/filecheck.py) matched
against the printed result of the passes. `run_pipeline` parses, runs the passes with the
verifier after each one, and returns the module, its printed text and what changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .filecheck import parse_checks

from tilecc.hlo.ir import HloModule
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.passes.pass_base import build_pipeline

GOLDEN_DIR = Path(__file__).parent / "golden"


@dataclass
class GoldenCase:
    name: str
    text: str
    passes: list[str]
    replicas: list[int]
    checks: list[tuple[str, str]]


def _directive(text: str, key: str) -> str:
    m = re.search(rf"^// {key}: (.*)$", text, re.MULTILINE)
    assert m is not None, f"golden file lacks // {key}:"
    return m.group(1).strip()


def load_case(path: Path) -> GoldenCase:
    text = path.read_text()
    return GoldenCase(path.stem, text, _directive(text, "PASSES").split(","),
                      [int(n) for n in _directive(text, "REPLICAS").split(",")],
                      parse_checks(text))


def golden_cases(prefix: str = "") -> list[GoldenCase]:
    return [load_case(p) for p in sorted(GOLDEN_DIR.glob(f"{prefix}*.hlo"))]


def with_replica_count(text: str, replicas: int) -> str:
    """The module text with its header's replica_count set to `replicas`."""
    return re.sub(r"replica_count=\d+", f"replica_count={replicas}", text, count=1)


def run_pipeline(text: str, passes: list[str]) -> tuple[HloModule, str, list[bool]]:
    module = parse_module(text, "<golden>")
    results = build_pipeline(passes, verify=True).run(module)
    return module, print_module(module), [changed for _, changed in results]
