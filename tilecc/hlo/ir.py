"""The HLO IR: instructions, computations and modules, mirroring XLA's C++ API.

Invariants (kept by every method here; the verifier checks the rest):
- `inst.users` lists each distinct user once; `b in a.users` iff `a in b.operands`.
- An instruction belongs to at most one computation (`inst.parent`); its operands live in
  the same computation. Instruction names are unique within a module (XLA's rule), and so
  are computation names; `HloModule.claim_name(prefix)` hands out fresh ones as XLA's
  NameUniquer does, and a removed instruction's name is never handed out again.
- `HloComputation.parameters[i].parameter_number == i`; `root` is one of its instructions.
- Instructions, operands and control edges change only through the methods here (and
  tilecc.hlo.builders, which adds through add_instruction); each bumps the computation's
  `_version`, which keeps its cached post-order honest. Code that builds a new
  computation (the parser, clone) may fill it directly before its first post_order().
- Attributes tilecc reads or builds are typed fields (dimensions, slice_*, replica_groups,
  channel_id, ...). Every other attribute is kept verbatim in `attributes` (name -> text,
  in the order read) and `metadata` keeps the `{...}` text, so printing loses nothing.
- A constant's `literal` is a numpy array (shape = the instruction's dims); the text it was
  read from is kept in `literal_text` so printing reproduces it exactly. Assigning
  `literal` drops the text (the printer then formats the array as XLA does).
"""

from __future__ import annotations

from itertools import islice
from typing import Iterable, Iterator, Sequence

import numpy as np

from tilecc.errors import VerifyError
from tilecc.hlo.names import NameUniquer
from tilecc.hlo.opcodes import CHANNEL_SIDE_EFFECTING, SIDE_EFFECTING, HloOpcode
from tilecc.hlo.post_order import make_post_order
from tilecc.hlo.replica_groups import ReplicaGroups
from tilecc.hlo.types import Shape, compatible

# Attributes copied onto a replacement that has none (XLA's ReplaceInstruction does this for
# metadata, sharding and frontend attributes).
_INHERITED_ATTRIBUTES = ("sharding", "frontend_attributes")


class HloInstruction:
    """One HLO instruction. Identity semantics: two instructions are equal only if the same object.

    The constructor takes the four fields every instruction has; the others start at their
    defaults and are set by assignment (one slot store each; a 32-parameter constructor
    cost three times as much per call, and passes and the parser make one per line).
    """

    __slots__ = ("name", "opcode", "shape", "operands", "users", "parent", "to_apply",
                 "condition", "body", "branch_computations", "calls", "dimensions",
                 "slice_starts", "slice_limits", "slice_strides", "replica_groups",
                 "channel_id", "use_global_device_ids", "constrain_layout", "literal_text",
                 "parameter_number", "tuple_index", "iota_dimension", "comparison_direction",
                 "comparison_type", "async_wrapped", "metadata", "attributes",
                 "control_predecessors", "control_successors", "_literal", "_mark")

    def __init__(self, name: str, opcode: HloOpcode, shape: Shape,
                 operands: list[HloInstruction] | None = None) -> None:
        self.name = name
        self.opcode = opcode
        self.shape = shape
        self.operands: list[HloInstruction] = [] if operands is None else operands
        self.users: list[HloInstruction] = []
        self.parent: HloComputation | None = None
        # called computations
        self.to_apply: HloComputation | None = None
        self.condition: HloComputation | None = None
        self.body: HloComputation | None = None
        self.branch_computations: list[HloComputation] | None = None
        # `calls=` (fusion, async-start, ...), custom-call's `called_computations=`, and
        # select-and-scatter's [select, scatter]
        self.calls: list[HloComputation] | None = None
        # typed attributes
        self.dimensions: tuple[int, ...] | None = None
        self.slice_starts: tuple[int, ...] | None = None
        self.slice_limits: tuple[int, ...] | None = None
        self.slice_strides: tuple[int, ...] | None = None
        self.replica_groups: ReplicaGroups | None = None
        self.channel_id: int | None = None
        self.use_global_device_ids = False
        self.constrain_layout = False
        self.literal_text: str | None = None
        self.parameter_number: int | None = None
        self.tuple_index: int | None = None
        self.iota_dimension: int | None = None
        self.comparison_direction: str | None = None
        self.comparison_type: str | None = None
        # for async-start / -update / -done written in XLA's sugared form (`negate-start(x)`,
        # `custom-call-done(s)`): the wrapped opcode's mnemonic, so printing keeps that form
        self.async_wrapped: str | None = None
        # the verbatim `{op_name="..." source_file="..." ...}` text, braces included
        self.metadata: str | None = None
        self.attributes: dict[str, str] = {}
        # instructions that must run before self; an empty tuple until add_control_dependency
        # makes it a list (most instructions have none, and one list fewer per instruction
        # is one object fewer for the allocator and the cyclic GC)
        self.control_predecessors: Sequence[HloInstruction] = ()
        # instructions naming self in their control-predecessors (None when there are none)
        self.control_successors: list[HloInstruction] | None = None
        self._literal: np.ndarray | None = None
        # post_order's visit mark (see there); no meaning outside one post_order call
        self._mark = 0

    # --- construction --------------------------------------------------------------------

    @staticmethod
    def create(opcode: HloOpcode, shape: Shape, operands: Iterable[HloInstruction] = (),
               name: str = "", **attrs: object) -> HloInstruction:
        """A new detached instruction; registers itself as a user of its operands.

        `name` may be empty: HloComputation.add_instruction then names it after the opcode.
        Keyword arguments set typed fields (dimensions=..., literal=..., ...).
        """
        inst = HloInstruction(name, opcode, shape, list(operands))
        for key, value in attrs.items():
            setattr(inst, key, value)
        inst.register_as_user()
        return inst

    def register_as_user(self) -> None:
        """Add self to each distinct operand's users (used after building `operands`)."""
        ops = self.operands
        for i, op in enumerate(ops):
            if i == 0 or op not in ops[:i]:
                op.users.append(self)

    # --- literal ---------------------------------------------------------------------------

    @property
    def literal(self) -> np.ndarray | None:
        """The constant's value as a numpy array of the shape's dims and dtype, else None.

        VerifyError when the text holds no value (XLA elides big constants as `{...}`).
        """
        if self._literal is None and self.literal_text is not None:
            from tilecc.hlo.literal import LiteralError, parse_literal
            try:
                self._literal = parse_literal(self.literal_text, self.shape)
            except LiteralError as err:
                raise VerifyError(f"constant {self.name}: no value in '{self.literal_text[:40]}':"
                                  f" {err.message}") from None
        return self._literal

    @literal.setter
    def literal(self, value: np.ndarray | None) -> None:
        self._literal = None if value is None else np.asarray(value)
        self.literal_text = None

    # --- queries ---------------------------------------------------------------------------

    def operand(self, i: int) -> HloInstruction:
        return self.operands[i]

    def called_computations(self) -> list[HloComputation]:
        """Every computation this instruction calls, in XLA's order."""
        out: list[HloComputation] = []
        if self.to_apply is not None:
            out.append(self.to_apply)
        if self.condition is not None:
            out.append(self.condition)
        if self.body is not None:
            out.append(self.body)
        if self.branch_computations:
            out.extend(self.branch_computations)
        if self.calls:
            out.extend(self.calls)
        return out

    def has_side_effect(self) -> bool:
        """XLA's HasSideEffect: the opcodes in opcodes.SIDE_EFFECTING; all-reduce, all-gather,
        all-to-all and reduce-scatter with constrain_layout=true; those and
        collective-permute with a channel_id (XLA: side-effecting unless the module is
        SPMD-partitioned, a config flag the text does not carry, and hlo_module_from_text
        leaves it off); custom calls marked custom_call_has_side_effect=true; and any
        instruction calling a computation that has a side effect."""
        opcode = self.opcode
        if opcode in SIDE_EFFECTING:
            return True
        if opcode in CHANNEL_SIDE_EFFECTING:
            if self.constrain_layout and opcode is not HloOpcode.COLLECTIVE_PERMUTE:
                return True
            if self.channel_id is not None:
                return True
        elif opcode is HloOpcode.CUSTOM_CALL \
                and self.attributes.get("custom_call_has_side_effect") == "true":
            return True
        return any(c.has_side_effect() for c in self.called_computations())

    def is_root(self) -> bool:
        return self.parent is not None and self.parent.root is self

    # --- mutation --------------------------------------------------------------------------

    def replace_operand_with(self, i: int, new: HloInstruction) -> None:
        """Point operand i at `new`, keeping both use lists right."""
        old = self.operands[i]
        if old is new:
            return
        self.operands[i] = new
        if self.parent is not None:
            self.parent._version += 1
        if old not in self.operands:
            old.users.remove(self)
        if self not in new.users:
            new.users.append(self)

    def replace_all_uses_with(self, new: HloInstruction) -> None:
        """Every user of self uses `new` instead; a root self is replaced as root too."""
        if new is self:
            return
        new_users = new.users
        for user in self.users:
            ops = user.operands
            user.operands = [new] if len(ops) == 1 else [new if op is self else op for op in ops]
            if user.parent is not None:
                user.parent._version += 1
            if user not in new_users:
                new_users.append(user)
        self.users.clear()
        if self.parent is not None and self.parent.root is self:
            self.parent.root = new

    def copy_inherited_attributes(self, source: HloInstruction) -> None:
        """Copy metadata / sharding / frontend_attributes from `source` where self has none."""
        if self.metadata is None and source.metadata is not None:
            self.metadata = source.metadata
        if not source.attributes:
            return
        for key in _INHERITED_ATTRIBUTES:
            if key in source.attributes and key not in self.attributes:
                self.attributes[key] = source.attributes[key]

    def __repr__(self) -> str:
        return f"<HloInstruction {self.name} = {self.shape.to_text()} {self.opcode.mnemonic}>"


class HloComputation:
    """An ordered set of instructions with a root and numbered parameters."""

    __slots__ = ("name", "_instructions", "root", "parameters", "parent",
                 "is_fusion_computation", "execution_thread", "_version", "_order",
                 "_order_version")

    def __init__(self, name: str, execution_thread: str | None = None) -> None:
        self.name = name
        self._instructions: dict[HloInstruction, None] = {}
        self.root: HloInstruction | None = None
        self.parameters: list[HloInstruction] = []
        self.parent: HloModule | None = None
        self.is_fusion_computation = False
        self.execution_thread = execution_thread
        # bumped by every change to the instructions, their operands or control edges;
        # the cached post-order (tilecc.hlo.post_order) is valid for one version
        self._version = 0
        self._order: list[HloInstruction] | None = None
        self._order_version = -1

    @property
    def instructions(self) -> list[HloInstruction]:
        """Instructions in their current order (the order read, new ones appended)."""
        return list(self._instructions)

    def __iter__(self) -> Iterator[HloInstruction]:
        return iter(list(self._instructions))

    def __len__(self) -> int:
        return len(self._instructions)

    def __contains__(self, inst: object) -> bool:
        return inst in self._instructions

    def add_instruction(self, inst: HloInstruction, name: str | None = None) -> HloInstruction:
        """Append `inst`; it gets `name` (or its own, or its opcode's) made unique in the module.

        A parameter is also registered in `parameters` at its parameter_number. Adding an
        instruction that is already in this computation returns it unchanged.
        """
        if inst.parent is not None:
            if inst.parent is self:
                return inst
            raise VerifyError(f"{inst.name} already belongs to computation {inst.parent.name}")
        wanted = name or inst.name or inst.opcode.mnemonic
        module = self.parent
        inst.name = module._names.claim(wanted) if module is not None else wanted
        inst.parent = self
        self._instructions[inst] = None
        self._version += 1
        if inst.parameter_number is not None and inst.opcode is HloOpcode.PARAMETER:
            n = inst.parameter_number
            while len(self.parameters) <= n:
                self.parameters.append(None)  # type: ignore[arg-type]
            self.parameters[n] = inst
        return inst

    def remove_instruction(self, inst: HloInstruction) -> None:
        """Remove an instruction nobody uses (not the root); it stops being a user of its operands."""
        if inst not in self._instructions:
            raise VerifyError(f"{inst.name} is not in computation {self.name}")
        if inst.users:
            raise VerifyError(f"cannot remove {inst.name}: still used by "
                              + ", ".join(u.name for u in inst.users))
        if inst is self.root:
            raise VerifyError(f"cannot remove {inst.name}: it is the root of {self.name}")
        for op in inst.operands:
            try:  # one scan; an operand listed twice lost inst at its first listing
                op.users.remove(inst)
            except ValueError:
                pass
        for pred in inst.control_predecessors:
            if pred.control_successors is not None and inst in pred.control_successors:
                pred.control_successors.remove(inst)
        for succ in inst.control_successors or ():
            preds = succ.control_predecessors
            assert isinstance(preds, list)
            preds.remove(inst)
        del self._instructions[inst]
        self._version += 1
        inst.parent = None

    def newest(self, count: int) -> set[HloInstruction]:
        """The `count` most recently added instructions."""
        return set(islice(reversed(self._instructions), count))

    def remove_newest(self, count: int) -> None:
        """Remove the `count` most recently added instructions, newest first (an expansion
        that was not used). Each must be unused once the newer ones are gone."""
        for inst in list(islice(reversed(self._instructions), count)):
            self.remove_instruction(inst)

    def is_safely_removable(self, inst: HloInstruction) -> bool:
        """XLA's IsSafelyRemovable plus IsDead's root test: not a parameter, not the root,
        and no control predecessors or successors (removing it would drop an ordering)."""
        return (inst.opcode is not HloOpcode.PARAMETER and inst is not self.root
                and not inst.control_predecessors and not inst.control_successors)

    def remove_instruction_and_unused_operands(self, inst: HloInstruction) -> None:
        """XLA's RemoveInstructionAndUnusedOperands: remove `inst` if it is unused and safely
        removable, then every operand (transitively) that became unused and is safely
        removable and free of side effects. `inst` itself is removed even when it has a side
        effect (XLA: `item->HasSideEffect() && item != instruction` keeps only operands):
        the caller asked for it."""
        worklist = [inst]
        while worklist:
            cur = worklist.pop()
            if (cur.parent is not self or cur.users or not self.is_safely_removable(cur)
                    or (cur is not inst and cur.has_side_effect())):
                continue
            operands = cur.operands
            if len(operands) > 1:
                operands = list(dict.fromkeys(operands))
            self.remove_instruction(cur)
            worklist.extend(operands)

    def replace_instruction(self, old: HloInstruction, new: HloInstruction) -> bool:
        """XLA's ReplaceInstruction (relay_control_dependency=false); returns whether it
        replaced. Shapes must be compatible (else VerifyError). When `old` has control
        predecessors or successors nothing changes and the result is False (XLA: "Skipping
        replacement because old instruction has control dependencies"); `new` is then left
        as it is, unused. Otherwise `new` inherits metadata, sharding and frontend
        attributes when it has none and takes over `old`'s original value (`origin=`, XLA's
        MoveOriginalValue); all uses (and the root) move to `new`; `old` and the operands
        that became dead are removed (see remove_instruction_and_unused_operands)."""
        if old.shape is not new.shape and not compatible(old.shape, new.shape):
            raise VerifyError(f"cannot replace {old.name} ({old.shape.to_text()}) with "
                              f"{new.name} ({new.shape.to_text()}): shapes differ")
        if old.control_predecessors or old.control_successors:
            return False
        if new.parent is None:
            self.add_instruction(new)
        if new.metadata is None or old.attributes:  # else there is nothing to copy
            new.copy_inherited_attributes(old)
        if old.attributes:
            origin = old.attributes.pop("origin", None)
            if origin is not None:
                new.attributes["origin"] = origin
        old.replace_all_uses_with(new)
        self.remove_instruction_and_unused_operands(old)
        return True

    def post_order(self) -> list[HloInstruction]:
        """Def-before-use order (operands and control predecessors first), XLA's
        MakeInstructionPostOrder (tilecc.hlo.post_order); a fresh list each call. The
        order is cached until the computation changes."""
        order = self._order
        if order is None or self._order_version != self._version \
                or len(order) != len(self._instructions):
            order = make_post_order(self)
            self.set_order(order)
        return list(order)

    def cached_order(self) -> list[HloInstruction] | None:
        """The cached order (tilecc.hlo.post_order: it sorts the instructions it holds as
        post_order() does), or None when the computation changed since it was made."""
        return self._order if self._order_version == self._version else None

    def set_order(self, order: list[HloInstruction]) -> None:
        """Cache `order` for the computation as it is now (see cached_order)."""
        self._order, self._order_version = order, self._version

    def has_side_effect(self) -> bool:
        return any(i.has_side_effect() for i in self._instructions)

    def instruction_by_name(self, name: str) -> HloInstruction | None:
        return next((i for i in self._instructions if i.name == name), None)

    def __repr__(self) -> str:
        return f"<HloComputation {self.name}: {len(self._instructions)} instructions>"


class HloModule:
    """A module: computations in order (callees before callers in XLA's text), an entry,
    the config and the header attributes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.computations: list[HloComputation] = []
        self.entry: HloComputation | None = None
        self.replica_count = 1
        self.num_partitions = 1
        self.entry_computation_layout: str | None = None
        self.input_output_alias: str | None = None
        self.frontend_attributes: str | None = None
        self.header_attributes: dict[str, str] = {}
        """Every other header attribute (is_scheduled, buffer_donor, ...), verbatim, in order."""
        self.header_order: list[str] = []
        """Header attribute names in the order read, typed ones included (for printing)."""
        self.stack_frames: str | None = None
        """The FileNames / FunctionNames / FileLocations / StackFrames block, verbatim."""
        self._names = NameUniquer("instruction")
        self._comp_names = NameUniquer("computation")

    # --- names -----------------------------------------------------------------------------
    # XLA's NameUniquer (tilecc.hlo.names): names read from text are kept verbatim and
    # registered; new ones are claimed; no name is ever handed out twice, even after the
    # instruction that had it was removed. Instruction and computation names are separate
    # namespaces, as in XLA.

    def unique_name(self, prefix: str) -> str:
        """The instruction name `claim_name(prefix)` would return, without claiming it."""
        return self._names.peek(prefix)

    def unique_computation_name(self, prefix: str) -> str:
        return self._comp_names.peek(prefix)

    def claim_name(self, wanted: str) -> str:
        """A fresh instruction name for `wanted` (XLA's GetUniqueName), now taken."""
        return self._names.claim(wanted)

    def claim_computation_name(self, wanted: str) -> str:
        return self._comp_names.claim(wanted)

    def register_computation_name(self, name: str) -> None:
        self._comp_names.register(name)

    def computation_name_is_used(self, name: str) -> bool:
        return name in self._comp_names

    # --- computations ----------------------------------------------------------------------

    def add_computation(self, comp: HloComputation, is_entry: bool = False) -> HloComputation:
        """Append `comp` (its name made unique); its instructions' names are claimed too."""
        comp.name = self.claim_computation_name(comp.name)
        comp.parent = self
        for inst in comp._instructions:
            inst.name = self.claim_name(inst.name)
        self.computations.append(comp)
        if is_entry:
            self.entry = comp
        return comp

    def computation_by_name(self, name: str) -> HloComputation | None:
        return next((c for c in self.computations if c.name == name), None)

    def computations_post_order(self) -> list[HloComputation]:
        """Callees before callers (XLA's MakeComputationPostOrder), entry last."""
        order: list[HloComputation] = []
        seen: set[int] = set()

        def visit(comp: HloComputation) -> None:
            stack: list[tuple[HloComputation, bool]] = [(comp, False)]
            while stack:
                node, expanded = stack.pop()
                if expanded:
                    order.append(node)
                    continue
                if id(node) in seen:
                    continue
                seen.add(id(node))
                stack.append((node, True))
                callees = [c for i in node._instructions for c in i.called_computations()]
                for callee in reversed(callees):
                    if id(callee) not in seen:
                        stack.append((callee, False))

        roots = [c for c in self.computations if c is not self.entry]
        called = {id(c) for comp in self.computations for i in comp._instructions
                  for c in i.called_computations()}
        for comp in [c for c in roots if id(c) not in called]:
            visit(comp)
        if self.entry is not None:
            visit(self.entry)
        for comp in self.computations:
            visit(comp)
        return order

    def non_fusion_computations(self) -> list[HloComputation]:
        return [c for c in self.computations_post_order() if not c.is_fusion_computation]

    def instruction_count(self) -> int:
        return sum(len(c) for c in self.computations)

    def clone(self) -> HloModule:
        """A deep copy that shares no mutable IR object with self (tilecc.hlo.clone)."""
        from tilecc.hlo.clone import clone_module
        return clone_module(self)

    def __repr__(self) -> str:
        return f"<HloModule {self.name}: {len(self.computations)} computations>"


def add_control_dependency(pred: HloInstruction, succ: HloInstruction) -> None:
    """`succ` runs after `pred` (XLA's AddControlDependencyTo); both use lists stay right."""
    if pred not in succ.control_predecessors:
        for comp in (pred.parent, succ.parent):
            if comp is not None:
                comp._version += 1
        succ.control_predecessors = [*succ.control_predecessors, pred]
        if pred.control_successors is None:
            pred.control_successors = []
        pred.control_successors.append(succ)
