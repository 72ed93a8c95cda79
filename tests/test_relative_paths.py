"""Shipped examples and fixtures name files relative to the repository: no absolute path of
the machine that generated them (jax records the generating script's path in every stack-
frame table; tests/fixtures/hlo/regenerate.py writes it relative)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ABSOLUTE = re.compile(r"""["'=](/(?:work|tmp|home|root|Users|opt|var|private)/[^"'\s]*)""")


def test_no_example_or_fixture_embeds_an_absolute_path() -> None:
    found = []
    for folder in ("examples", "tests/fixtures"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file() and path.suffix in (".hlo", ".json", ".py", ".txt", ".md", ".sh"):
                for match in ABSOLUTE.finditer(path.read_text(errors="replace")):
                    found.append(f"{path.relative_to(REPO)}: {match.group(1)}")
    assert found == []


def test_regenerate_writes_the_script_path_relative(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "tests" / "fixtures" / "hlo"))
    try:
        import regenerate
    finally:
        sys.path.pop(0)
    text = f'FileNames\n1 "{regenerate.ROOT}/tests/fixtures/hlo/regenerate.py"\n'
    regenerate.write_fixture(tmp_path / "case.debug.hlo", text)
    assert (tmp_path / "case.debug.hlo").read_text() == \
        'FileNames\n1 "tests/fixtures/hlo/regenerate.py"\n'
