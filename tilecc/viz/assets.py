"""The layout engine a page embeds: @viz-js/viz (Graphviz compiled to WebAssembly), from npm.

Contract:
- `VIZ_JS` is the pinned npm package; `install_viz_js()` runs `npm install` of it into
  `cache_dir()` (`$TILECC_CACHE`, else `$XDG_CACHE_HOME/tilecc`, else `~/.cache/tilecc`).
  `make test` and the browser tests call it (`python -m tilecc.viz.assets`); nothing of the
  package is committed to the repository: the page gets a copy when it is written.
- `viz_js_source()` is the package's browser build (`dist/viz-global.js`, one file that
  carries the WebAssembly inside it, so the page makes no request) or None when it is not
  installed; `missing_viz_js_note()` is the one line a page and the command print then.
- `viz_js_module()` is the ES-module build, which `hlo-graph -o g.svg` runs under node.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

from tilecc.errors import TileccError

VIZ_JS = "@viz-js/viz@3.31.0"
_PACKAGE_DIR = Path("node_modules") / "@viz-js" / "viz" / "dist"


def cache_dir() -> Path:
    if explicit := os.environ.get("TILECC_CACHE"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tilecc"


def npm_prefix() -> Path:
    return cache_dir() / "npm"


def viz_js_path() -> Path:
    return npm_prefix() / _PACKAGE_DIR / "viz-global.js"


def viz_js_module() -> Path:
    return npm_prefix() / _PACKAGE_DIR / "viz.js"


@cache
def viz_js_source() -> str | None:
    path = viz_js_path()
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def missing_viz_js_note() -> str:
    return (f"graph layout needs {VIZ_JS} (npm), not found at {viz_js_path()}: "
            f"run `python -m tilecc.viz.assets` (or `make test`) to install it")


def install_viz_js() -> Path:
    """npm-install the pinned package into the cache (a no-op when it is there)."""
    if viz_js_path().is_file():
        return viz_js_path()
    npm = shutil.which("npm")
    if npm is None:
        raise TileccError(f"cannot install {VIZ_JS}: npm is not on PATH")
    npm_prefix().mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save",
                           "--prefix", str(npm_prefix()), VIZ_JS],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not viz_js_path().is_file():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise TileccError(f"npm install {VIZ_JS} failed: {last}")
    viz_js_source.cache_clear()
    return viz_js_path()


if __name__ == "__main__":
    try:
        print(install_viz_js())
    except TileccError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
