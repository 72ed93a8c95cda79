"""The operators the instruction layer installs on the plain-data types of the frontend.

Contract: `NkiTensor` (tilecc/nki/tensor.py) and `Op` (tilecc/nki/ops.py) are plain data:
they import nothing above them. What their Python operators compute (`a + b`, `t[i] = x`,
`nl.exp(t)`, a partition broadcast, `t.ap(...)`) is an NKI instruction, so the module that
emits instructions (tilecc/nki/tile_ops.py) installs those callables here when it is
imported; `import tilecc.nki` always imports it. Calling an operator that nothing
installed is an internal error (tilecc.nki was not imported), never a silent no-op.

Invariant: each name is installed exactly once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_INSTALLED: dict[str, Callable[..., Any]] = {}


def install(name: str, fn: Callable[..., Any]) -> None:
    """Register the callable behind operator `name` (once)."""
    assert name not in _INSTALLED, f"operator {name} installed twice"
    _INSTALLED[name] = fn


def installed(name: str) -> Callable[..., Any]:
    """The callable behind operator `name`."""
    if (fn := _INSTALLED.get(name)) is None:
        raise RuntimeError(f"tensor operator {name!r} is not installed: import tilecc.nki first")
    return fn
