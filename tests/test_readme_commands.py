"""Every command the README shows runs as written, from a folder that has the repository's
examples/ (as a clone has): the indented and ```sh command lines of each section in order in
one folder (a section's commands may use what earlier ones wrote; sections run apart, so a
parallel run spreads them), after the ```python kernel block is saved as the file the README
names and run. A `$ command` with output under it must print exactly that output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
# what a fresh clone runs first; the suite itself is already running under them
SKIPPED = ("make ",)


def shown_commands(text: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for every command line of a code block."""
    return [(command, expected) for _, command, expected in sectioned_commands(text)]


def sectioned_commands(text: str) -> list[tuple[str, str, list[str]]]:
    """(section heading, command, expected output lines) in README order."""
    commands: list[tuple[str, str, list[str]]] = []
    fence: str | None = None
    expecting: list[str] | None = None
    heading = ""
    for line in text.splitlines():
        if fence is None and line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip()
        elif fence is not None:
            if fence == "sh" and line.strip() and not line.startswith(SKIPPED):
                commands.append((heading, line, []))
        elif not line.startswith("    "):
            expecting = None
        elif (body := line[4:]).startswith("$ "):
            expecting = []
            commands.append((heading, body[2:], expecting))
        elif body.startswith(("tilecc ", "python ")):
            expecting = None
            commands.append((heading, body, []))
        elif expecting is not None:
            expecting.append(body)
    return commands


def python_block() -> str:
    match = re.search(r"```python\n(.*?)```", README, re.S)
    assert match is not None
    return match.group(1)


def test_the_readme_shows_the_main_commands() -> None:
    lines = [c for c, _ in shown_commands(README)]
    for start in ("tilecc hlo-opt examples/hlo/psum_max.hlo", "tilecc codegen examples/klr/",
                  "tilecc sim sm.bir.json", "tilecc host-opt examples/host/",
                  "tilecc trace center_rows.py:center_rows", "tilecc run examples/kernels/"):
        assert any(line.startswith(start) for line in lines), start


SECTIONS = list(dict.fromkeys(heading for heading, _, _ in sectioned_commands(README)))


def test_every_section_with_commands_is_run() -> None:
    assert len(SECTIONS) >= 6 and all(SECTIONS), SECTIONS


@pytest.mark.oracle
@pytest.mark.parametrize("section", SECTIONS)
def test_every_readme_command_runs_as_shown(section: str, tmp_path: Path) -> None:
    os.symlink(REPO / "examples", tmp_path / "examples")
    kernel_file = re.search(r"Saved as\s+`([\w.]+)`", README)
    assert kernel_file is not None
    (tmp_path / kernel_file.group(1)).write_text(python_block())
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    setup = subprocess.run([sys.executable, kernel_file.group(1)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
    assert setup.returncode == 0, setup.stderr
    for heading, command, expected in sectioned_commands(README):
        if heading != section:
            continue
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        if expected:
            assert (done.stdout + done.stderr).splitlines() == expected, command
            continue
        assert done.returncode == 0, f"{command}\n{done.stderr}"
