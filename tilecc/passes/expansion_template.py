"""Expansion templates: an expander's rewrite traced once per match shape, then stamped.

Contract:
- `trace(match, build)` runs `build` (a pass's builder-based rewrite) once on a stand-in of
  `match` in a scratch module with the same replica_count / num_partitions: the stand-in
  has the match's opcode, shape, typed fields and attributes, and its operands are scratch
  parameters of the operands' shapes (named after them). Every builder check and shape
  inference runs there, and any error is raised there, naming the match. The result, an
  `ExpansionTemplate`, lists the new instructions in the order `build` added them: opcode,
  shape, typed fields that differ from a new instruction's, its opcode's name (the name
  tilecc.hlo.builders give; the trace checks it), and its operands as positions in a pool (the match's operands first, then the new instructions).
- `template.stamp(match)` makes the same instructions for `match`: operands mapped to the
  match's, every field as traced, the match's metadata where the trace carried the
  stand-in's, names claimed from the module in the traced order (each root's counter goes
  as the builders would have taken it), users linked, added at the end of the match's
  computation (one version step each, as add_instruction). It returns the new root, or None
  when `build` declined.
- A template is valid for every match with the same key: the pass's `expansion_key` must
  hold everything `build` reads from the match except its operands' identities, its name
  and its metadata (tests/passes/test_expansion_template.py holds stamped and built
  expansions equal on every fixture, golden case and random module).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule
from tilecc.hlo.names import sanitize, split_suffix
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.types import Shape

# fields a stamp sets itself (identity, links, per-match values) or that a traced build
# never sets (control edges, the DFS mark); every other slot is copied when traced non-default
_NOT_COPIED = frozenset({"name", "opcode", "shape", "operands", "users", "parent", "metadata",
                         "attributes", "control_predecessors", "control_successors", "_mark"})
_COPIED = tuple(s for s in HloInstruction.__slots__ if s not in _NOT_COPIED)
# what the stand-in copies from the match (its links are the scratch ones)
_STAND_IN = tuple(s for s in HloInstruction.__slots__ if s not in _NOT_COPIED or s == "metadata")

Traced = tuple[str, HloOpcode, Shape, tuple[int, ...], tuple[tuple[str, object], ...],
               dict[str, str] | None, bool]
"""One traced instruction: (wanted name, opcode, shape, operand pool positions, copied
fields, attributes or None, metadata from the match)."""
Step = tuple[int, HloOpcode, Shape, tuple[int, ...], tuple[tuple[str, object], ...],
             dict[str, str] | None, bool]
"""A Traced with the wanted name replaced by its position in ExpansionTemplate.claims."""


class ExpansionTemplate:
    """One traced expansion (see the module contract)."""

    __slots__ = ("steps", "root", "claims")

    def __init__(self, traced: list[Traced], root: int | None) -> None:
        self.root = root
        """The pool position of the expansion's result; None when the build declined."""
        self.claims = list(Counter(wanted for wanted, *_ in traced).items())
        """(wanted name, how many instructions ask for it), in the order first asked for."""
        group = {wanted: i for i, (wanted, _) in enumerate(self.claims)}
        self.steps: list[Step] = [(group[wanted], opcode, shape, refs, fields, attrs, meta)
                                  for wanted, opcode, shape, refs, fields, attrs, meta in traced]

    def stamp(self, match: HloInstruction) -> HloInstruction | None:
        if self.root is None:
            return None
        comp = match.parent
        assert comp is not None and comp.parent is not None, f"{match.name} is detached"
        claim_many = comp.parent._names.claim_many
        names = [iter(claim_many(wanted, count)) for wanted, count in self.claims]
        insts = comp._instructions
        meta = match.metadata
        pool = list(match.operands)
        for group, opcode, shape, refs, fields, attributes, own_meta in self.steps:
            first = pool[refs[0]]
            if len(refs) == 1:
                inst = HloInstruction(next(names[group]), opcode, shape, [first])
                first.users.append(inst)
            elif len(refs) == 2:
                second = pool[refs[1]]
                inst = HloInstruction(next(names[group]), opcode, shape, [first, second])
                first.users.append(inst)
                if second is not first:
                    second.users.append(inst)
            else:
                inst = HloInstruction(next(names[group]), opcode, shape, [pool[r] for r in refs])
                inst.register_as_user()
            if own_meta:
                inst.metadata = meta
            for slot, value in fields:
                setattr(inst, slot, value)
            if attributes is not None:
                inst.attributes = dict(attributes)
            inst.parent = comp
            insts[inst] = None
            pool.append(inst)
        comp._version += len(self.steps)
        return pool[self.root]


def _scratch_stand_in(match: HloInstruction) -> HloInstruction:
    """A copy of `match` in a fresh module whose operands are parameters of its operands'
    shapes; its metadata is a text object of its own (the trace tells it apart by identity)."""
    source = match.parent
    assert source is not None and source.parent is not None, f"{match.name} is detached"
    module = HloModule("expansion_template")
    module.replica_count = source.parent.replica_count
    module.num_partitions = source.parent.num_partitions
    comp = HloComputation("scratch")
    module.add_computation(comp, is_entry=True)
    params = []
    for number, op in enumerate(match.operands):
        param = HloInstruction(op.name, HloOpcode.PARAMETER, op.shape)
        param.parameter_number = number
        comp.add_instruction(param)
        param.name = op.name  # verbatim (a claim would sanitize): errors name the operand
        params.append(param)
    stand_in = HloInstruction(match.name, match.opcode, match.shape, params)
    for slot in _STAND_IN:
        setattr(stand_in, slot, getattr(match, slot))
    stand_in.metadata = "".join(("{", "}"))  # a new object, never one a build could make
    stand_in.attributes = dict(match.attributes)
    stand_in.register_as_user()
    comp.add_instruction(stand_in)
    stand_in.name = match.name
    return stand_in


def trace(match: HloInstruction,
          build: Callable[[HloInstruction], HloInstruction | None]) -> ExpansionTemplate:
    """The template of `build` for matches like `match` (see the module contract)."""
    stand_in = _scratch_stand_in(match)
    comp = stand_in.parent
    assert comp is not None
    root = build(stand_in)
    if root is not None and root.parent is None:
        comp.add_instruction(root)
    made = list(comp._instructions)[len(stand_in.operands) + 1:]
    if root is None:
        return ExpansionTemplate([], None)
    position = {inst: i for i, inst in enumerate(stand_in.operands)}
    blank = HloInstruction("", HloOpcode.PARAMETER, stand_in.shape)
    steps: list[Traced] = []
    for inst in made:
        assert not inst.control_predecessors and not inst.control_successors, \
            f"the expansion of {match.name} adds control edges"
        assert inst.opcode is not HloOpcode.PARAMETER, \
            f"the expansion of {match.name} adds a parameter"
        refs = tuple(position[op] for op in inst.operands)  # KeyError: it reads the match
        wanted = inst.opcode.mnemonic
        assert split_suffix(inst.name)[0] == split_suffix(sanitize(wanted))[0], \
            f"the expansion of {match.name} names {inst.name} other than after its opcode"
        fields = tuple((slot, value) for slot in _COPIED
                       if (value := getattr(inst, slot)) is not getattr(blank, slot))
        own_meta = inst.metadata is stand_in.metadata
        if not own_meta and inst.metadata is not None:
            fields += (("metadata", inst.metadata),)
        steps.append((wanted, inst.opcode, inst.shape, refs, fields,
                      dict(inst.attributes) if inst.attributes else None, own_meta))
        position[inst] = len(position)
    return ExpansionTemplate(steps, position[root])
