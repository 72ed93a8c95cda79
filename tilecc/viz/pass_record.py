"""One pass run, recorded for a picture: the module before and after, and every match with
the instructions its rewrite removed and the subgraph it added.

Contract: `record_pass(info, text, path, after_text)` parses `text` twice (the module
before, and the copy the pass rewrites), runs the registry's pass on the copy and returns a
`PassRun` (holding `after_text`, the after module's text, when the caller has it).
For an OpExpanderPass each expansion is recorded as it happens (the instance's
`expand_instruction` is wrapped for this run, so the driver itself is unchanged); a match
counts only when it was replaced (a match with control dependencies is left alone by the
driver, see tilecc.passes.pass_base). For match m, in expansion order:
- `removed`: m and the operands that became dead with it -- the instructions reached from
  m through operands in the module before whose names the module after no longer has;
- `added`: the expansion's result and the instructions reached from it through operands
  that the module before did not have and no earlier match claimed.
Names identify instructions across the two modules: XLA's naming never hands a removed
instruction's name out again (tilecc.hlo.ir), so a new name is a new instruction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilecc.hlo.ir import HloInstruction, HloModule
from tilecc.hlo.parser import parse_module
from tilecc.passes.pass_base import OpExpanderPass, PassInfo


@dataclass(slots=True)
class Match:
    match: str
    computation: str
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


@dataclass(slots=True)
class PassRun:
    pass_name: str
    before_text: str
    before: HloModule
    after: HloModule
    changed: bool
    matches: list[Match]
    after_text: str | None = None
    """The after module's text when the caller has it (a dump): pages then skip printing."""


def _names(module: HloModule) -> set[str]:
    return {inst.name for comp in module.computations for inst in comp.instructions}


def _walk_back(start: HloInstruction, keep: set[str], claimed: set[str]) -> list[str]:
    """Names reached from `start` through operands, staying on names in `keep` not claimed."""
    found: list[str] = []
    stack = [start]
    while stack:
        inst = stack.pop()
        if inst.name not in keep or inst.name in claimed:
            continue
        claimed.add(inst.name)
        found.append(inst.name)
        stack.extend(reversed(inst.operands))
    return found


def record_pass(info: PassInfo, text: str, path: str = "<dump>",
                after_text: str | None = None) -> PassRun:
    before = parse_module(text, path)
    after = parse_module(text, path)
    hlo_pass = info.create()
    expansions: list[tuple[str, str, HloInstruction]] = []
    if isinstance(hlo_pass, OpExpanderPass):
        expand = hlo_pass.expand_instruction

        def recording_expand(inst: HloInstruction) -> HloInstruction | None:
            new = expand(inst)
            if new is not None and inst.parent is not None:
                expansions.append((inst.name, inst.parent.name, new))
            return new
        hlo_pass.expand_instruction = recording_expand  # type: ignore[method-assign]
    changed = hlo_pass.run(after)

    before_names, after_names = _names(before), _names(after)
    gone = before_names - after_names
    fresh = after_names - before_names
    by_name = {inst.name: inst for comp in before.computations for inst in comp.instructions}
    taken_before: set[str] = set()
    taken_after: set[str] = set()
    matches = []
    for name, comp_name, new in expansions:
        if name not in gone or new.parent is None:  # not replaced: the expansion was dropped
            continue
        matches.append(Match(name, comp_name, _walk_back(by_name[name], gone, taken_before),
                             _walk_back(new, fresh, taken_after)))
    return PassRun(hlo_pass.name, text, before, after, changed, matches, after_text)
