"""The host pass framework: HostPass, the PassPipeline driver and its report and dumps.

Contract:
- A HostPass maps a Program to a Program (`run_program(program, scope)`, `scope` being the
  module-level constants and names the program sees, tilecc/host/constants.py), returning
  the SAME object when it changes nothing. The driver (`HostPass.run_module`) runs it on
  every @pl.program of a module in order (a module-level @pl.function is never a pass's
  input: pypto's passes see program functions only) and returns the same module object
  when no program changed, so "changed" is an identity test, never a deep comparison.
- A pass declares the IR properties it requires, produces and invalidates, as pypto's do;
  PassPipeline refuses a pass whose required properties no earlier pass established
  (PassError).
- `PassPipeline.run(module, listener)` runs the passes in order; `listener(name, changed)`
  is called after each (what `host-opt` prints as `NAME: changed` / `NAME: no change`),
  and `results` holds the (name, changed) pairs of the last run, as the HLO pipeline
  returns them. With `dump_dir` it writes the module before and after each pass as
  `NN-<pass>.before.py` / `.after.py` (printed). In verification mode (the default) it
  checks after every pass that print -> parse gives back an equal module, so a pass can
  never leave IR that the printer and parser disagree on.
- A pass error that points at a source position (one with `located(path)`) gets the
  pipeline's `path`, so it prints as `path:line:col: error: ...` like a ParseError.
The registry of passes (names, aliases, `build_pipeline`) is tilecc/host/passes/__init__.py.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tilecc.errors import PassError, TileccError
from tilecc.fileio import write_dump
from tilecc.host import ir
from tilecc.host.constants import Scope, program_scopes
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
    def run_program(self, program: ir.Program, scope: Scope) -> ir.Program: ...

    def run_module(self, module: ir.Module) -> ir.Module:
        """Every program of the module with the scope it sees; see the module contract."""
        return module.replace_programs([self.run_program(p, scope) for p, scope
                                        in zip(module.programs, program_scopes(module))])


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
    dump_dir: Path | None = None
    results: list[tuple[str, bool]] = field(default_factory=list)

    def run(self, module: ir.Module, listener: Callable[[str, bool], None] | None = None) -> ir.Module:
        """The module after every pass; see the module contract."""
        self.results = []
        try:
            return self._run(module, listener)
        except TileccError as err:
            located = getattr(err, "located", None)
            raise located(self.path) if located is not None else err

    def _run(self, module: ir.Module, listener: Callable[[str, bool], None] | None) -> ir.Module:
        for index, host_pass in enumerate(self.passes, start=1):
            missing = host_pass.properties.required - self.properties
            if missing:
                raise PassError(f"{host_pass.name}: requires IR properties {sorted(missing)} "
                                "that no earlier pass established")
            self._dump(index, host_pass.name, "before", module)
            after = host_pass.run_module(module)
            self.properties -= host_pass.properties.invalidated
            self.properties |= host_pass.properties.produced
            changed = after is not module
            if self.verify_round_trip:
                check_round_trip(after, host_pass.name)
            self._dump(index, host_pass.name, "after", after)
            self.results.append((host_pass.name, changed))
            if listener is not None:
                listener(host_pass.name, changed)
            module = after
        return module

    def _dump(self, index: int, name: str, when: str, module: ir.Module) -> None:
        if self.dump_dir is None:
            return
        write_dump(self.dump_dir, f"{index:02d}-{name}.{when}.py", print_module(module))
