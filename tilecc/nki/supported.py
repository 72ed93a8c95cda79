"""What the frontend implements: `tilecc.nki.supported()` and `tilecc nki --list-supported`.

Contract: `supported()` maps each public NKI module tilecc provides ("nki", "nki.language",
"nki.isa", "nki.compiler") to the sorted names it exports (its `__all__`), so an
instruction added to a module's `__all__` is listed with no other change. Names a module
knows but refuses (an instruction KLR / BIR cannot express) are not listed: calling them
is a KernelError at the kernel line.
"""

from __future__ import annotations

import types

from tilecc.nki import compiler, driver, estimates, isa, language

# "nki" itself exports the driver's names (jit, simulate ...) and benchmark / profile
_MODULES: dict[str, list[types.ModuleType]] = {"nki": [driver, estimates], "nki.language": [language],
                                               "nki.isa": [isa], "nki.compiler": [compiler]}


def supported() -> dict[str, list[str]]:
    """Module name -> the names tilecc implements there."""
    return {name: sorted(n for module in modules for n in getattr(module, "__all__"))
            for name, modules in _MODULES.items()}


def render_supported() -> str:
    """One line per module: `nki.isa (26): activate2 activation ...`."""
    return "\n".join(f"{name} ({len(names)}): {' '.join(names)}" for name, names in supported().items())
