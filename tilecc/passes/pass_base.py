"""The pass framework: HloPass, XLA's OpExpanderPass driver, PassPipeline and the registry.

Contract:
- `HloPass.run(module) -> bool` rewrites `module` in place and returns whether it changed.
- `OpExpanderPass` has XLA's semantics (xla/hlo/transforms/expanders/op_expander_pass.cc,
  spec 000 "xla::OpExpanderPass::Run"): for every non-fusion computation, walk the
  instructions in post-order and COLLECT every match of `instruction_matches_pattern`
  (and of the optional `extra_filter`) first; then `expand_instruction` each match and
  `replace_instruction(old, new)`, which moves all uses to the replacement, copies the
  metadata onto it when it has none, and removes the old instruction and the operands that
  became dead. A gate therefore never sees a half-rewritten graph. An expansion returning
  None leaves that instruction alone (XLA: "no change"). The cyclic GC is paused while
  a pass runs (`gc_paused`, tilecc.hlo.collector); expanders add instructions with
  tilecc.hlo.builders.
- The post-order only orders the matches (it decides the new names and places), so it is
  taken from the cheapest exact source: a computation with one match needs none; else the
  order an earlier pass left cached; else, when each match depends on the one before it in
  stored order, that order (tilecc.hlo.post_order.dependency_chain, one pass); else a DFS.
- An expander may instead define its rewrite as `build_expansion` (builders on the match)
  with an `expansion_key`: the default `expand_instruction` then traces the build once per
  key and run (tilecc.passes.expansion_template) and stamps that template for every match
  with the key, which skips the builders' checks and shape inference per instruction.
- A match with control predecessors or successors is expanded but not replaced (XLA's
  ReplaceInstruction skips it and returns false). XLA leaves the unused expansion for DCE
  and still reports "changed"; tilecc removes the expansion at once, so the module is
  exactly as before, and that match does not count as a change: `run` returns True only
  when an instruction was replaced, so a pipeline rerun to a fixed point terminates and
  `hlo-opt` never reports a change it did not make. (Names the expansion claimed stay
  taken, as in XLA, where the dead expansion holds them until DCE.)
- Computations called by async-start / async-update / async-done are skipped: XLA requires
  an async computation to hold only its parameters and root (the verifier's "expected to
  contain only the root and parameter instructions"), so any expansion inside one would
  make the module invalid. To rewrite such an op the async wrapper must be removed first.
- `PassPipeline` runs named steps in order; with `verify=True` it runs the HLO verifier
  before the first and after every pass (a failure names the pass); with `dump_dir` it
  writes the module before and after each pass as `NN-<pass>.before.hlo` / `.after.hlo`.
- `PASS_REGISTRY`: the `--passes` table. Each entry has the CLI name, the spec's registry
  name (accepted as an alias), the spec's registry order and the class (imported lazily, so
  the table does not import every pass module). `lookup_pass(name)` raises PassError
  listing the valid names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path

from tilecc.errors import PassError, VerifyError
from tilecc.fileio import write_dump
from tilecc.hlo.collector import collector_paused as gc_paused
from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule
from tilecc.hlo.opcodes import ASYNC, HloOpcode
from tilecc.hlo.post_order import dependency_chain, keeps_relative_order
from tilecc.hlo.printer import print_module
from tilecc.hlo.verifier import verify_module
from tilecc.passes.expansion_template import ExpansionTemplate, trace


class HloPass:
    """A module-to-module rewrite; subclasses set `name` and implement `run`."""

    name = "hlo-pass"

    def run(self, module: HloModule) -> bool:
        raise NotImplementedError


class OpExpanderPass(HloPass):
    """Gate + rewrite driver (XLA's OpExpanderPass); subclasses implement the two hooks."""

    gate_opcodes: frozenset[HloOpcode] | None = None
    """The only opcodes the gate can accept, when a subclass knows them: the scan then skips
    every other instruction without calling the gate (same matches, less time)."""

    def __init__(self, extra_filter: Callable[[HloInstruction], bool] | None = None) -> None:
        self.extra_filter = extra_filter
        self._templates: dict[Hashable, ExpansionTemplate] = {}

    def instruction_matches_pattern(self, inst: HloInstruction) -> bool:
        raise NotImplementedError

    def expand_instruction(self, inst: HloInstruction) -> HloInstruction | None:
        """The template of `build_expansion` for `inst`'s key, stamped for `inst` (see the
        module contract); an expander without a template overrides this."""
        comp = inst.parent
        assert comp is not None and comp.parent is not None, f"{inst.name} is detached"
        key = (self.expansion_key(inst), comp.parent.replica_count, comp.parent.num_partitions)
        template = self._templates.get(key)
        if template is None:
            template = self._templates[key] = trace(inst, self.build_expansion)
        return template.stamp(inst)

    def expansion_key(self, inst: HloInstruction) -> Hashable:
        """Everything `build_expansion` reads from `inst` but its operands' identities, its
        name and its metadata (tilecc.passes.expansion_template)."""
        raise NotImplementedError

    def build_expansion(self, inst: HloInstruction) -> HloInstruction | None:
        """The rewrite of `inst` with tilecc.hlo.builders (traced, see expand_instruction)."""
        raise NotImplementedError

    def matches(self, module: HloModule) -> list[HloInstruction]:
        """Every instruction the pass would expand, in the order `run` expands them."""
        hits_by_comp: dict[HloComputation, set[HloInstruction]] = {}
        for comp in module.computations:
            if comp.is_fusion_computation:
                continue
            gate, extra, opcodes = self.instruction_matches_pattern, self.extra_filter, \
                self.gate_opcodes
            hits = {inst for inst in comp._instructions
                    if (opcodes is None or inst.opcode in opcodes) and gate(inst)
                    and (extra is None or extra(inst))}
            if hits:
                hits_by_comp[comp] = hits
        if any(comp is not module.entry for comp in hits_by_comp):
            for comp in async_computations(module):
                hits_by_comp.pop(comp, None)
        # The post-orders only order the matches: skip them where there is nothing to order.
        comps = list(hits_by_comp)
        if len(comps) > 1:
            comps = [c for c in module.non_fusion_computations() if c in hits_by_comp]
        found: list[HloInstruction] = []
        for comp in comps:
            hits = hits_by_comp[comp]
            if len(hits) == 1:  # nothing to order: no walk of the whole computation
                found.extend(hits)
                continue
            order = comp.cached_order()  # what an earlier pass left (tilecc.hlo.post_order)
            if order is not None:
                ordered = [inst for inst in order if inst in hits]
                if len(ordered) == len(hits):  # it holds every match
                    found.extend(ordered)
                    continue
            chain = dependency_chain(comp, hits)  # one pass, no DFS, when the matches chain
            if chain is not None:
                found.extend(chain)
                continue
            found.extend(inst for inst in comp.post_order() if inst in hits)
        return found

    def run(self, module: HloModule) -> bool:
        self._templates.clear()  # a template holds the module's computations (to_apply)
        try:
            return self._expand_matches(module)
        finally:
            self._templates.clear()

    def _expand_matches(self, module: HloModule) -> bool:
        changed = False
        # per computation: the cached post-order while every change keeps it valid
        kept: dict[HloComputation, list[HloInstruction] | None] = {}
        with gc_paused():
            for inst in self.matches(module):
                comp = inst.parent
                assert comp is not None, f"{inst.name} was removed before its expansion"
                if comp not in kept:
                    kept[comp] = comp.cached_order()
                size, version = len(comp._instructions), comp._version
                new = self.expand_instruction(inst)
                if new is not None and new.parent is None:
                    comp.add_instruction(new)
                added = len(comp._instructions) - size
                if kept[comp] is not None and not self._keeps_order(inst, new, added,
                                                                    comp._version - version):
                    kept[comp] = None
                if new is None:
                    continue
                if comp.replace_instruction(inst, new):
                    changed = True
                else:  # control dependencies: drop the unused expansion (see the docstring)
                    comp.remove_newest(added)
        for comp, order in kept.items():
            if order is not None:
                comp.set_order([i for i in order if i.parent is comp])
        return changed


    @staticmethod
    def _keeps_order(inst: HloInstruction, new: HloInstruction | None, added: int,
                     steps: int) -> bool:
        """Whether the cached order stays valid across this expansion: it only added
        instructions (one version step each; none unless it returned an instruction), and
        replacing `inst` by `new` keeps the others' relative order (tilecc.hlo.post_order)."""
        if steps != added:
            return False
        if new is None:
            return not added
        assert inst.parent is not None
        return keeps_relative_order(inst, new, inst.parent.newest(added))


def async_computations(module: HloModule) -> set[HloComputation]:
    """Computations called by an async-start / async-update / async-done."""
    return {callee for comp in module.computations for inst in comp._instructions
            if inst.opcode in ASYNC for callee in inst.calls or ()}


def verify_or_raise(module: HloModule, when: str, allow_mixed_precision: bool = False) -> None:
    """Run the HLO verifier; re-raise its error with `when` ("after pass X") in front."""
    try:
        verify_module(module, allow_mixed_precision)
    except VerifyError as err:
        raise VerifyError(f"{when}: {err}") from None


class PassPipeline:
    """Named passes run in order, with optional verification and before/after dumps."""

    def __init__(self, passes: list[HloPass], *, verify: bool = True,
                 dump_dir: Path | None = None, allow_mixed_precision: bool = False) -> None:
        self.passes = passes
        self.verify = verify
        self.allow_mixed_precision = allow_mixed_precision
        """The verifier's XLA option of that name (a reducer of another precision)."""
        self.dump_dir = dump_dir

    def run(self, module: HloModule,
            listener: Callable[[HloPass, HloModule, str], None] | None = None
            ) -> list[tuple[str, bool]]:
        """Run every pass; returns (pass name, changed) per pass, in order. `listener` is
        called with (pass, module, "before" / "after") right around each pass's run (what a
        command reports: time, matches, what changed)."""
        if self.verify:
            verify_or_raise(module, "input module", self.allow_mixed_precision)
        results: list[tuple[str, bool]] = []
        for index, hlo_pass in enumerate(self.passes, start=1):
            self._dump(module, index, hlo_pass.name, "before")
            if listener is not None:
                listener(hlo_pass, module, "before")
            changed = hlo_pass.run(module)
            if listener is not None:
                listener(hlo_pass, module, "after")
            self._dump(module, index, hlo_pass.name, "after")
            if self.verify:
                verify_or_raise(module, f"after pass {hlo_pass.name}",
                                self.allow_mixed_precision)
            results.append((hlo_pass.name, changed))
        return results

    def _dump(self, module: HloModule, index: int, name: str, when: str) -> None:
        if self.dump_dir is None:
            return
        write_dump(self.dump_dir, f"{index:02d}-{name}.{when}.hlo", print_module(module),
                   PassError)


@dataclass(frozen=True, slots=True)
class PassInfo:
    """One row of the `--passes` table."""

    cli_name: str
    spec_name: str
    registry_order: int
    module: str
    class_name: str

    def pass_class(self) -> type[HloPass]:
        cls = getattr(importlib.import_module(self.module), self.class_name)
        assert issubclass(cls, HloPass)
        return cls

    def create(self) -> HloPass:
        return self.pass_class()()


# Spec 000: "DecomposeIntAllReduce (registry order 88, aws_neuron_decompose_int_all_reduce)
# and DecomposeScalarReduce (registry order 74, aws_neuron_decompose_scalar_reduce)".
PASS_REGISTRY: tuple[PassInfo, ...] = (
    PassInfo("decompose-int-all-reduce", "aws_neuron_decompose_int_all_reduce", 88,
             "tilecc.passes.decompose_int_all_reduce", "DecomposeIntAllReduce"),
    PassInfo("decompose-scalar-reduce", "aws_neuron_decompose_scalar_reduce", 74,
             "tilecc.passes.decompose_scalar_reduce", "DecomposeScalarReduce"),
)


def lookup_pass(name: str) -> PassInfo:
    """The registry row for a CLI name or spec registry name; PassError listing the valid ones."""
    for info in PASS_REGISTRY:
        if name in (info.cli_name, info.spec_name):
            return info
    valid = ", ".join(f"{i.cli_name} (alias {i.spec_name})" for i in PASS_REGISTRY)
    raise PassError(f"unknown pass '{name}'; valid passes: {valid}")


def build_pipeline(names: list[str], *, verify: bool = True, dump_dir: Path | None = None,
                   allow_mixed_precision: bool = False) -> PassPipeline:
    """A pipeline of the named passes in the order given."""
    return PassPipeline([lookup_pass(n).create() for n in names], verify=verify,
                        dump_dir=dump_dir, allow_mixed_precision=allow_mixed_precision)
