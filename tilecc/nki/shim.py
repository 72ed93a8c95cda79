"""The opt-in `neuronxcc` shim: `import neuronxcc.nki` (NKI 1.x) and `import nki` (2.x) give
tilecc's frontend, so existing NKI scripts and test files run unchanged on the simulator.

Contract:
- `install()` (one call, e.g. in a conftest.py or at the top of a script) puts a finder first
  on sys.meta_path for the rest of the process; `uninstall()` takes it away again. Every
  `neuronxcc`, `neuronxcc.nki[.language|.isa|.isa.constants|.typing|.compiler]` and
  `nki[...]` import then resolves to tilecc.nki (even where the real package is installed:
  tilecc can trace only its own frontend). Modules of those names imported before are
  dropped from sys.modules, so later imports see tilecc.
- `tilecc nki-shim -- COMMAND ...` runs COMMAND (`pytest test_x.py`, `python script.py`)
  with the shim installed at interpreter start-up (`command_environment`: a sitecustomize
  on PYTHONPATH that calls install(), tilecc itself on PYTHONPATH too; its temporary folder
  is removed when COMMAND ends).
- `aliases()` is the same for the duration of a with-block, and restores sys.modules
  after; `tilecc run` / `trace` use it while they import and trace a kernel file, so a
  kernel that imports `neuronxcc.nki` inside its function body works as well.
`nki.isa` is a package in NKI (`nki.isa.constants`); its alias is a package module holding
tilecc.nki.isa's names, and `.isa.constants` is tilecc's enum module (engine, dge_mode,
oob_mode, reduce_cmd). Every other alias is the tilecc module itself.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import tempfile
import types
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

# alias suffix (after "neuronxcc.nki" or "nki") -> the tilecc module it is
_TARGETS = {"": "tilecc.nki", ".language": "tilecc.nki.language", ".isa": "tilecc.nki.isa",
            ".isa.constants": "tilecc.nki.isa_enums", ".typing": "tilecc.nki.typing",
            ".compiler": "tilecc.nki.compiler"}
_ROOTS = ("neuronxcc.nki", "nki")


def _alias_target(fullname: str) -> str | None:
    if fullname == "neuronxcc":
        return ""
    for root in _ROOTS:
        if fullname == root or fullname.startswith(root + "."):
            return _TARGETS.get(fullname[len(root):])
    return None


class _ShimFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves the NKI package names to tilecc's modules (module docstring)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if _alias_target(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        target = _alias_target(spec.name)
        if not target:   # "neuronxcc": an empty package whose `nki` is tilecc's frontend
            module = types.ModuleType(spec.name)
            module.__path__ = []
            return module
        real = importlib.import_module(target)
        if not spec.name.endswith(".isa"):
            return real
        package = types.ModuleType(spec.name, real.__doc__)   # nki.isa is a package
        package.__dict__.update({k: v for k, v in vars(real).items() if not k.startswith("__")
                                 or k in ("__all__", "__getattr__")})
        package.__path__ = []
        return package

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ == "neuronxcc":
            module.nki = importlib.import_module("tilecc.nki")  # type: ignore[attr-defined]


_FINDER = _ShimFinder()
_STATE = {"installed": False, "depth": 0}


def _shim_names() -> list[str]:
    return [name for name in sys.modules if _alias_target(name) is not None]


def install() -> None:
    """Make `neuronxcc.nki` / `nki` imports resolve to tilecc for the rest of the process."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    if not _STATE["installed"]:
        for name in _shim_names():
            if getattr(sys.modules[name], "__loader__", None) is not _FINDER:
                del sys.modules[name]
        _STATE["installed"] = True


def uninstall() -> None:
    """Undo install(): the names are free again (their modules leave sys.modules)."""
    _STATE["installed"] = False
    if _STATE["depth"] == 0:
        _remove()


def _remove() -> None:
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in _shim_names():
        del sys.modules[name]


@contextmanager
def aliases() -> Iterator[None]:
    """The shim for the duration of the block; sys.modules is as before afterwards."""
    if _STATE["installed"]:
        yield
        return
    saved = {name: sys.modules.pop(name) for name in _shim_names()}
    _STATE["depth"] += 1
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    try:
        yield
    finally:
        _STATE["depth"] -= 1
        if _STATE["depth"] == 0 and not _STATE["installed"]:
            _remove()
            sys.modules.update(saved)


_SITECUSTOMIZE = "import tilecc.nki.shim\ntilecc.nki.shim.install()\n"


@contextmanager
def command_environment(base: dict[str, str] | None = None) -> Iterator[dict[str, str]]:
    """An environment whose Python processes start with the shim installed (a folder holding
    a sitecustomize.py that calls install(), and tilecc's own folder, first on PYTHONPATH),
    for the duration of the block: the folder is removed afterwards, however the block ends."""
    env = dict(os.environ if base is None else base)
    with tempfile.TemporaryDirectory(prefix="tilecc-nki-shim-") as name:
        folder = Path(name)
        (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        package_root = str(Path(__file__).resolve().parents[2])
        entries = [str(folder), package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(entries)
        yield env
