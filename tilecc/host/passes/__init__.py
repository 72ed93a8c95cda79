"""Registry of host passes: the `--passes` table of host-opt and host-run.

Contract: HOST_PASS_REGISTRY has one row per pass: the CLI name, the class-style name
(accepted as an alias), the module and class (imported when the pass is built, so the
table imports no pass module). `lookup_pass(name)` takes either spelling
(`synthesize-allreduce-signals` or `SynthesizeAllReduceSignals`) and raises PassError
naming the known passes otherwise; `get_pass(name)` is a new instance of it;
`build_pipeline(names, ...)` is the one PassPipeline (tilecc/host/pass_manager.py) of the
named passes, in order, that every command and test runs; `list_passes()` is the table as
`--list-passes` prints it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from tilecc.errors import PassError
from tilecc.host.pass_manager import HostPass, PassPipeline


@dataclass(frozen=True, slots=True)
class HostPassInfo:
    """One row of the host `--passes` table."""

    cli_name: str
    display_name: str
    module: str
    class_name: str

    def pass_class(self) -> type[HostPass]:
        cls = getattr(importlib.import_module(self.module), self.class_name)
        assert issubclass(cls, HostPass) and cls.name == self.cli_name, self
        return cls

    def create(self) -> HostPass:
        return self.pass_class()()


HOST_PASS_REGISTRY: tuple[HostPassInfo, ...] = (
    HostPassInfo("synthesize-allreduce-signals", "SynthesizeAllReduceSignals",
                 "tilecc.host.passes.synthesize_allreduce_signals", "SynthesizeAllReduceSignals"),
)


def lookup_pass(name: str) -> HostPassInfo:
    for info in HOST_PASS_REGISTRY:
        if name in (info.cli_name, info.display_name):
            return info
    known = ", ".join(sorted(i.cli_name for i in HOST_PASS_REGISTRY))
    raise PassError(f"unknown host pass `{name}` (known: {known})")


def get_pass(name: str) -> HostPass:
    return lookup_pass(name).create()


def pass_names(spec: str) -> list[str]:
    """The names of a comma-separated `--passes` value (empty entries dropped)."""
    return [name.strip() for name in spec.split(",") if name.strip()]


def build_pipeline(names: list[str], *, verify: bool = True, dump_dir: Path | None = None,
                   path: str = "<string>") -> PassPipeline:
    """A pipeline of the named passes in the order given (unknown names: PassError)."""
    return PassPipeline([get_pass(n) for n in names], verify_round_trip=verify, path=path,
                        dump_dir=dump_dir)


def list_passes() -> str:
    rows = [(i.cli_name, i.display_name, i.pass_class().summary) for i in HOST_PASS_REGISTRY]
    return "".join(f"{name:32} {display}: {summary}\n" for name, display, summary in rows)
