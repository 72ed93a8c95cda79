"""Session set-up shared by the whole suite: the suite writes nothing into the checkout.

Hypothesis keeps its example database and caches in a temporary directory of the session
(removed at its end; the property tests are derandomized, so nothing is lost); pytest's own
cache is off (`-p no:cacheprovider` in pyproject.toml); tests/test_typecheck.py gives mypy a
cache directory outside the tree. tests/test_clean_checkout.py checks all three.
"""

from __future__ import annotations

import shutil
import tempfile

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="tilecc-hypothesis-")
set_hypothesis_home_dir(_HYPOTHESIS_HOME)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HYPOTHESIS_HOME, ignore_errors=True)
