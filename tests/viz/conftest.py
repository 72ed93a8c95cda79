"""Browser tests: headless Chromium (Debian's, installed here when missing and possible) with
the pages' layout engine (npm, installed into the cache when missing); a skip says why."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tilecc.errors import TileccError


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from tilecc.viz.assets import install_viz_js
    from tilecc.viz.browser import BrowserUnavailable, ensure_chromium, open_browser
    try:
        install_viz_js()
    except TileccError as err:
        pytest.skip(f"no layout engine for the pages: {err}")
    try:
        ensure_chromium()
        with open_browser() as context:
            yield context
    except BrowserUnavailable as err:
        pytest.skip(f"no headless Chromium: {err}")
