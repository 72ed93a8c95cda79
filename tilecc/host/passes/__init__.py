"""Registry of host passes: CLI name (and class-style alias) -> pass class.

Contract: `get_pass(name)` accepts either spelling (`synthesize-allreduce-signals` or
`SynthesizeAllReduceSignals`) and raises PassError naming the known passes otherwise.
"""

from __future__ import annotations

from tilecc.errors import PassError
from tilecc.host.pass_manager import HostPass
from tilecc.host.passes.synthesize_allreduce_signals import SynthesizeAllReduceSignals

PASSES: dict[str, type[HostPass]] = {
    SynthesizeAllReduceSignals.name: SynthesizeAllReduceSignals,
}
ALIASES: dict[str, str] = {cls.display_name: name for name, cls in PASSES.items()}


def get_pass(name: str) -> HostPass:
    cls = PASSES.get(ALIASES.get(name, name))
    if cls is None:
        raise PassError(f"unknown host pass `{name}` (known: {', '.join(sorted(PASSES))})")
    return cls()
