"""The data of the HLO views of a page: a module's graphs, and a pass's before / after.

Contract:
- `module_data(module, prefix)` is what page.js's `Module` reads: the DOT graph attributes,
  the highlight colours, the computations in print order (each with its instructions'
  indices) and one row per instruction: name, computation index, the node's DOT attributes
  (tilecc.viz.hlo_dot.node_attributes, so page graphs and .dot files look alike), operand
  indices in operand order, the printed HLO line, op_name and source position
  (tilecc.viz.hlo_metadata), and the indices of the computations it calls (page links). Indices are NodeIds order, so node ids are `<prefix><index>`.
- `module_section(module)` is the `module` view (hlo-graph --html);
  `pass_section(run, verdict)` the `pass` view of one pass run (tilecc.viz.pass_record):
  every match with the instructions it removed (before) and the subgraph it added (after).
"""

from __future__ import annotations

from typing import Any

from tilecc.hlo.ir import HloModule
from tilecc.hlo.printer import instructions_in_print_order, print_instruction
from tilecc.viz.hlo_dot import CLASS_COLOURS, GRAPH_ATTRS, NodeIds, node_attributes
from tilecc.viz.hlo_metadata import StackFrames, source_of
from tilecc.viz.page import Section
from tilecc.viz.pass_record import PassRun


def module_data(module: HloModule, ids: NodeIds) -> dict[str, Any]:
    frames = StackFrames.parse(module.stack_frames)
    index = {inst: k for k, inst in enumerate(ids.order)}
    comp_index = {comp: c for c, comp in enumerate(ids.computations)}
    comps = [{"name": comp.name, "entry": comp is module.entry,
              "insts": [index[i] for i in instructions_in_print_order(comp)]}
             for comp in ids.computations]
    shape_texts: dict[int, str] = {}
    rows = []
    for k, inst in enumerate(ids.order):
        comp = inst.parent
        assert comp is not None
        source = source_of(inst, frames)
        rows.append([inst.name, comp_index[comp], node_attributes(inst, ids[inst], None),
                     [index[o] for o in inst.operands],
                     print_instruction(inst, comp.root is inst, shape_texts).strip(),
                     source.op_name, source.position(),
                     [comp_index[c] for c in inst.called_computations() if c in comp_index]])
    return {"prefix": ids.prefix, "name": module.name, "graph": GRAPH_ATTRS,
            "colours": CLASS_COLOURS, "comps": comps, "insts": rows}


def module_section(module: HloModule, title: str = "") -> Section:
    ids = NodeIds(module)
    return Section("module", {"module": module_data(module, ids)}, title, len(ids.order))


def pass_section(run: PassRun, verdict: tuple[bool, str] | None = None,
                 title: str = "", prefix: str = "") -> Section:
    """`prefix` keeps node ids unique when a page holds several views."""
    before, after = NodeIds(run.before, f"{prefix}b"), NodeIds(run.after, f"{prefix}a")
    b_index = {inst.name: k for k, inst in enumerate(before.order)}
    a_index = {inst.name: k for k, inst in enumerate(after.order)}
    matches = [{"match": b_index[m.match], "comp": m.computation,
                "removed": [b_index[n] for n in m.removed],
                "added": [a_index[n] for n in m.added]} for m in run.matches]
    data = {"pass": run.pass_name, "changed": run.changed,
            "verdict": None if verdict is None else {"ok": verdict[0], "text": verdict[1]},
            "before": module_data(run.before, before), "after": module_data(run.after, after),
            "matches": matches}
    return Section("pass", data, title or f"{run.pass_name}: before / after",
                   len(before.order) + len(after.order))
