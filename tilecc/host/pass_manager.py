"""Host passes, their properties, and the pipeline that runs them.

Contract: a HostPass maps a Program to a Program (the same object when nothing changes)
and declares IR properties it requires, produces and invalidates, as pypto's passes do.
A PassPipeline runs passes in order over every program of a module, refuses a pass whose
required properties are not established (PassError), and in verification mode (the
default) checks after every pass that print -> parse gives back an equal module, so a
pass can never leave IR that the printer and parser disagree on. A pass error that points
at a source position (one with `located(path)`) gets the pipeline's `path`, so it prints
as `path:line:col: error: ...` like a ParseError.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from tilecc.errors import PassError, TileccError
from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.printer import print_module


@dataclass(frozen=True)
class PassProperties:
    required: frozenset[str] = frozenset()
    produced: frozenset[str] = frozenset()
    invalidated: frozenset[str] = frozenset()


class HostPass(ABC):
    """One transformation of host programs. `name` is the CLI spelling, `display_name`
    the class-style spelling (both are accepted by the registry)."""

    name: str = ""
    display_name: str = ""
    summary: str = ""
    properties: PassProperties = PassProperties()

    @abstractmethod
    def run_program(self, program: ir.Program) -> ir.Program: ...

    def run_module(self, module: ir.Module) -> ir.Module:
        return module.replace_programs([self.run_program(p) for p in module.programs])


def check_round_trip(module: ir.Module, after: str) -> None:
    """PassError unless printing `module` and parsing the text back gives an equal module."""
    text = print_module(module)
    try:
        again = parse_module(text, f"<printed after {after}>")
    except TileccError as err:
        raise PassError(f"{after}: printed program does not parse again: {err}") from None
    if again == module:
        return
    for before_prog, after_prog in zip(module.programs, again.programs):
        for fa, fb in zip(before_prog.functions, after_prog.functions):
            if fa != fb:
                raise PassError(f"{after}: print -> parse changed function "
                                f"`{before_prog.name}.{fa.name}`")
    raise PassError(f"{after}: print -> parse changed the module")


@dataclass
class PassPipeline:
    passes: list[HostPass]
    verify_round_trip: bool = True
    properties: set[str] = field(default_factory=set)
    path: str = "<string>"   # the file the module was parsed from, for error positions

    def run(self, module: ir.Module) -> ir.Module:
        try:
            return self._run(module)
        except TileccError as err:
            located = getattr(err, "located", None)
            raise located(self.path) if located is not None else err

    def _run(self, module: ir.Module) -> ir.Module:
        for host_pass in self.passes:
            missing = host_pass.properties.required - self.properties
            if missing:
                raise PassError(f"{host_pass.name}: requires IR properties {sorted(missing)} "
                                "that no earlier pass established")
            module = host_pass.run_module(module)
            self.properties -= host_pass.properties.invalidated
            self.properties |= host_pass.properties.produced
            if self.verify_round_trip:
                check_round_trip(module, host_pass.name)
        return module
