"""Headless Chromium for looking at tilecc's pages: the browser tests and the README's
screenshots use it (playwright from PyPI drives Debian's chromium; no browser download).

Contract:
- `find_chromium()` is the Chromium binary (`$TILECC_CHROMIUM`, else Debian's
  /usr/lib/chromium/chromium or `chromium` on PATH) or None. `ensure_chromium()` also
  installs Debian's `chromium` with apt-get when running as root and it is missing, and
  otherwise raises BrowserUnavailable saying why (the tests skip with that reason).
- `open_browser()` starts it headless with a fresh --user-data-dir and the flags that keep
  it from touching the network by itself (CHROMIUM_FLAGS); `open_page(context, file)` loads
  a page and logs every request the page makes, over the DevTools protocol
  (Network.requestWillBeSent): `LoadedPage.requests` lists them, the page's own file first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"]
_DEBIAN_BINARY = "/usr/lib/chromium/chromium"


class BrowserUnavailable(Exception):
    """Why no headless Chromium can be driven here (one line)."""


def find_chromium() -> str | None:
    if explicit := os.environ.get("TILECC_CHROMIUM"):
        return explicit if Path(explicit).is_file() else None
    if Path(_DEBIAN_BINARY).is_file():
        return _DEBIAN_BINARY
    return shutil.which("chromium")


def ensure_chromium() -> str:
    if (found := find_chromium()) is not None:
        return found
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        raise BrowserUnavailable("Chromium not found and cannot be installed here (needs root "
                                 "and apt-get): apt-get install -y chromium")
    for command in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise BrowserUnavailable(f"{' '.join(command[1:])} failed: {last}")
    if (found := find_chromium()) is None:
        raise BrowserUnavailable("apt-get installed chromium but no binary was found")
    return found


@contextmanager
def open_browser(width: int = 1600, height: int = 1000) -> Iterator[Any]:
    """A playwright browser context on a fresh profile (removed afterwards)."""
    binary = ensure_chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise BrowserUnavailable("playwright is not installed (pip install -e '.[test]')") \
            from None
    with tempfile.TemporaryDirectory(prefix="tilecc-chromium-") as profile, \
            sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            profile, executable_path=binary, headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": width, "height": height}, offline=True)
        try:
            yield context
        finally:
            context.close()


@dataclass
class LoadedPage:
    page: Any
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def open_page(context: Any, path: Path) -> LoadedPage:
    page = context.new_page()
    loaded = LoadedPage(page)
    session = context.new_cdp_session(page)
    session.on("Network.requestWillBeSent", lambda e: loaded.requests.append(e["request"]["url"]))
    session.send("Network.enable")
    page.on("pageerror", lambda err: loaded.errors.append(str(err)))
    page.on("console", lambda msg: loaded.errors.append(msg.text) if msg.type == "error" else None)
    page.goto(path.resolve().as_uri(), wait_until="load")
    return loaded


def wait_until(page: Any, expression: str, timeout: float = 60.0) -> None:
    """Poll `expression` in the page until it is truthy. (playwright's wait_for_function
    compiles its predicate with `new Function`, which the pages' CSP rightly forbids.)"""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise TimeoutError(f"page never satisfied: {expression}")
        page.wait_for_timeout(50)


RENDERED = ("document.querySelectorAll('div.gbox').length > 0 && "
            "[...document.querySelectorAll('div.gbox')].every(g => g.dataset.rendered || "
            "!g.classList.contains('whole') && !g.closest('.match-block'))")
"""True once every graph laid out on load is drawn (neighbourhood graphs of large
computations wait for a pick)."""
