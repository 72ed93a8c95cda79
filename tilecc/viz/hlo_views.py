"""The data of the HLO views of a page: a module's graphs, and a pass's before / after.

Contract:
- `module_data(module, prefix)` is what page.js's `Module` reads: the DOT graph attributes,
  the highlight colours, the computations in print order (each with its instructions'
  indices), the looks table of tilecc.viz.hlo_dot (so page graphs and .dot files look alike)
  and one row per instruction: name, computation index, node label, node kind, whether it is
  the root, operand indices in operand order, the HLO line, and the indices of the
  computations it calls; plus the module's stack frames resolved to `file:line (function)`
  (tilecc.viz.hlo_metadata). The page reads op_name and the source position out of the
  line's metadata when a node is clicked (page.js sourceOf: the same fields and frame rule
  as hlo_metadata.source_of), so writing a page costs no metadata parsing per instruction.
  Indices are NodeIds order, so node ids are `<prefix><index>`.
- `module_section(module)` is the `module` view (hlo-graph --html);
  `pass_section(run, verdict)` the `pass` view of one pass run (tilecc.viz.pass_record):
  every match with the instructions it removed (before) and the subgraph it added (after).
"""

from __future__ import annotations

import re
from typing import Any

from tilecc.hlo.ir import HloModule
from tilecc.hlo.printer import instructions_in_print_order, print_instruction
from tilecc.passes.pass_base import gc_paused
from tilecc.viz.hlo_dot import CLASS_STYLES, COPY_STYLE, GRAPH_ATTRS, HUB_USERS, NODE_STYLES, \
    ROOT_STYLE, NodeIds, instruction_label, node_kind
from tilecc.viz.hlo_metadata import StackFrames
from tilecc.viz.page import Section
from tilecc.viz.pass_record import PassRun


_DEFINITION = re.compile(r"[ \t]*(?:ROOT[ \t]+)?%?([^\s=%]+)[ \t]*=[ \t]*\S")


def instruction_lines(text: str) -> dict[str, str]:
    """Instruction name -> its line in `text` (an instruction written on one line, as XLA
    prints them); the page then shows the module as it was written, and skips printing."""
    lines: dict[str, str] = {}
    for line in text.splitlines():
        if (found := _DEFINITION.match(line)) is not None:
            lines.setdefault(found.group(1), line.strip())
    return lines


def module_data(module: HloModule, ids: NodeIds, text: str | None = None) -> dict[str, Any]:
    """`text`, the module's text when at hand, gives the HLO lines (else they are printed)."""
    written = instruction_lines(text) if text is not None else {}
    tables = StackFrames.parse(module.stack_frames)
    frames = {str(k): tables.resolve(k).position() for k in tables.frames}
    index = {inst: k for k, inst in enumerate(ids.order)}
    comp_index = {comp: c for c, comp in enumerate(ids.computations)}
    comps = [{"name": comp.name, "entry": comp is module.entry,
              "insts": [index[i] for i in instructions_in_print_order(comp)]}
             for comp in ids.computations]
    rows = []
    for inst in ids.order:
        comp = inst.parent
        assert comp is not None
        root = comp.root is inst
        calls = [comp_index[c] for c in inst.called_computations() if c in comp_index] \
            if inst.to_apply is not None or inst.calls or inst.condition is not None \
            or inst.branch_computations else []
        rows.append([inst.name, comp_index[comp], instruction_label(inst),
                     node_kind(inst), int(root), [index[o] for o in inst.operands],
                     written.get(inst.name) or print_instruction(inst, root).lstrip(),
                     calls])
    return {"prefix": ids.prefix, "name": module.name, "graph": GRAPH_ATTRS,
            "styles": NODE_STYLES, "root_style": ROOT_STYLE, "classes": CLASS_STYLES,
            "hub_users": HUB_USERS, "copy_style": COPY_STYLE, "frames": frames,
            "comps": comps, "insts": rows}


def module_section(module: HloModule, title: str = "", text: str | None = None) -> Section:
    ids = NodeIds(module)
    with gc_paused():   # many small lists, all alive until the page is written
        data = module_data(module, ids, text)
    return Section("module", {"module": data}, title, len(ids.order))


def pass_section(run: PassRun, verdict: tuple[bool, str] | None = None,
                 title: str = "", prefix: str = "") -> Section:
    """`prefix` keeps node ids unique when a page holds several views."""
    before, after = NodeIds(run.before, f"{prefix}b"), NodeIds(run.after, f"{prefix}a")
    b_index = {inst.name: k for k, inst in enumerate(before.order)}
    a_index = {inst.name: k for k, inst in enumerate(after.order)}
    matches = [{"match": b_index[m.match], "comp": m.computation,
                "removed": [b_index[n] for n in m.removed],
                "added": [a_index[n] for n in m.added]} for m in run.matches]
    with gc_paused():
        data = {"pass": run.pass_name, "changed": run.changed,
                "verdict": None if verdict is None else {"ok": verdict[0], "text": verdict[1]},
                "before": module_data(run.before, before, run.before_text),
                "after": module_data(run.after, after, run.after_text), "matches": matches}
    return Section("pass", data, title or f"{run.pass_name}: before / after",
                   len(before.order) + len(after.order))
