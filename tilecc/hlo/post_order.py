"""Def-before-use order of a computation (XLA's MakeInstructionPostOrder) and its cache.

Contract:
- `make_post_order(comp)`: a DFS from every instruction without users (and without control
  successors), then from every instruction, in stored order; operands are visited first to
  last, then control predecessors. This is XLA's order, and OpExpanderPass expands its
  matches in it, so it decides the names and the places of the new instructions.
- The cache (`HloComputation._order`, valid while `_order_version == _version`; every IR
  mutator bumps `_version`) holds a list that sorts any set of the computation's current
  instructions as the post-order does. A fresh DFS stores the whole order; an expansion
  pass keeps it valid across its own replacements when each one passes
  `keeps_relative_order` (then the list is the old order without the replaced
  instructions: the new ones are not in it, so it is shorter than the computation and
  answers only for instructions that were there before).
- `keeps_relative_order(old, root, new)` is true when replacing `old` by the expansion
  `root` (whose new instructions are `new`) leaves every other old instruction in the same
  relative post-order: `old` has users (so `root` takes its place in their operand lists
  instead of becoming a DFS start at the end of the stored order), every new instruction
  is reached from `root` through new instructions, and the DFS through the expansion meets
  the instructions outside it first in the order `old`'s operands are visited. The DFS then
  enters every old instruction at the same moment as before with the same ones already
  visited; only the new ones are interleaved. tests/passes holds the cached order equal to
  a fresh DFS after every pass on every fixture.
- `dependency_chain(comp, members)` orders a set of instructions without a DFS when it
  can: when, in stored order, each member depends through operands on the member before
  it, every def-before-use order -- the post-order included -- lists them so, and that
  list is returned; otherwise None. One pass over the stored order, which need not be a
  def-before-use order: a dependency it misses (a user stored before its operand) only
  makes the answer None, never a wrong order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection

if TYPE_CHECKING:
    from tilecc.hlo.ir import HloComputation, HloInstruction

_epoch = 0  # grows by 2 per DFS, so marks left by an older DFS never look current


def make_post_order(comp: HloComputation) -> list[HloInstruction]:
    """The post-order by a fresh DFS (see the module contract).

    Written for speed: a node stays on the DFS stack while its operands are visited
    (instead of being pushed twice as (node, expanded) pairs), and visits are marks on the
    instructions (`_mark`) rather than set entries.
    """
    global _epoch
    _epoch += 2
    visited = _epoch  # mark >= visited: visited; mark == visited + 1: emitted
    emitted = visited + 1
    insts = list(comp._instructions)
    order: list[HloInstruction] = []
    starts = [i for i in insts if not i.users and not i.control_successors]
    for start in starts + insts:
        if start._mark >= visited:
            continue
        stack = [start]
        while stack:
            node = stack[-1]
            if node._mark >= visited:  # its operands are done (or a stale duplicate)
                stack.pop()
                if node._mark != emitted:
                    node._mark = emitted
                    order.append(node)
                continue
            node._mark = visited
            deps = [*node.operands, *node.control_predecessors] \
                if node.control_predecessors else node.operands
            for dep in reversed(deps):
                if dep._mark < visited:
                    stack.append(dep)
    return order


def dependency_chain(comp: HloComputation, members: Collection[HloInstruction]
                     ) -> list[HloInstruction] | None:
    """`members` in post-order when they form a dependency chain (see the module contract)."""
    chain: list[HloInstruction] = []
    # the instructions seen so far that depend on the last member seen (through operands)
    dependents: set[HloInstruction] = set()
    for inst in comp._instructions:
        depends = not dependents.isdisjoint(inst.operands)
        if inst in members:
            if chain and not depends:
                return None
            chain.append(inst)
            if len(chain) == len(members):
                return chain
            dependents = {inst}
        elif depends:
            dependents.add(inst)
    return None


def keeps_relative_order(old: HloInstruction, root: HloInstruction,
                         new: Collection[HloInstruction]) -> bool:
    """Whether replacing `old` by `root` (new instructions `new`) keeps the relative
    post-order of every other old instruction (see the module contract)."""
    if not old.users or root not in new:
        return False
    # the DFS's meeting order, as a preorder walk: a node counts when it is popped
    met: dict[HloInstruction, None] = {}  # instructions outside the expansion, first meetings
    seen: set[HloInstruction] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node in new:
            if node not in seen:
                seen.add(node)
                if node.control_predecessors:
                    stack.extend(reversed(node.control_predecessors))
                stack.extend(reversed(node.operands))
        elif node not in met:
            met[node] = None
    return len(seen) == len(new) and \
        list(met) == list(dict.fromkeys([*old.operands, *old.control_predecessors]))
