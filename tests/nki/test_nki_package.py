"""Package hygiene of tilecc.nki: no import cycles (top-level or inside functions), every
public module lists its names in __all__ with a docstring for each callable, and
`supported()` / `tilecc nki --list-supported` list them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import tilecc.nki as nki
from tilecc.nki import compiler, isa, language

PACKAGE = Path(nki.__file__).parent


def _imports(path: Path) -> set[str]:
    """The tilecc.nki modules `path` imports anywhere (module level or inside a function)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module == "tilecc.nki":
                found.update(f"tilecc.nki.{alias.name}" for alias in node.names
                             if (PACKAGE / f"{alias.name}.py").exists())
            elif node.module.startswith("tilecc.nki."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("tilecc.nki."))
    return found


def _graph() -> dict[str, set[str]]:
    graph = {f"tilecc.nki.{p.stem}": _imports(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return {name: {d for d in deps if d in graph and d != name} for name, deps in graph.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (found := visit(dep)) is not None:
                return found
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_frontend_modules_import_without_a_cycle():
    assert _cycle(_graph()) is None


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_tensor_type_and_the_op_table_import_nothing_above_them():
    graph = _graph()
    assert graph["tilecc.nki.tensor"] <= {"tilecc.nki.dtypes", "tilecc.nki.errors",
                                          "tilecc.nki.indexing", "tilecc.nki.operators",
                                          "tilecc.nki.tensor_layout", "tilecc.nki.view_indexing"}
    assert graph["tilecc.nki.tensor_layout"] <= {"tilecc.nki.dtypes", "tilecc.nki.errors"}
    assert graph["tilecc.nki.view_indexing"] <= {"tilecc.nki.errors", "tilecc.nki.indexing",
                                                 "tilecc.nki.tensor_layout"}
    assert graph["tilecc.nki.ops"] <= {"tilecc.nki.operators"}
    assert "tilecc.nki.driver" not in graph["tilecc.nki.errors"]
    assert "tilecc.nki.loader" not in graph["tilecc.nki.driver"]


@pytest.mark.parametrize("module", [language, isa, compiler, nki], ids=lambda m: m.__name__)
def test_public_modules_list_their_names_and_document_every_callable(module):
    names = module.__all__
    assert len(names) == len(set(names))
    undocumented = [name for name in names
                    if callable(value := getattr(module, name)) and not isinstance(value, str)
                    and not (getattr(value, "__doc__", None) or "").strip()]
    assert undocumented == []


def test_supported_lists_what_is_implemented_and_not_what_is_refused():
    listed = nki.supported()
    assert {"nki", "nki.language", "nki.isa", "nki.compiler"} <= set(listed)
    assert "tensor_scalar" in listed["nki.isa"] and "exp" in listed["nki.language"]
    assert "jit" in listed["nki"] and "simulate" in listed["nki"]
    assert listed["nki.isa"] == sorted(isa.__all__)


def test_list_supported_on_the_command_line():
    run = subprocess.run([sys.executable, "-m", "tilecc.cli", "nki", "--list-supported"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    line = next(line for line in run.stdout.splitlines() if line.startswith("nki.isa "))
    assert f"({len(isa.__all__)})" in line and " tensor_tensor " in line


def test_nki_without_a_flag_is_one_line(capsys):
    from tilecc.cli import main
    assert main(["nki"]) == 1
    assert capsys.readouterr().err.strip() == "error: nki: expected --list-supported"
