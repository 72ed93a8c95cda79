"""HLO -> Graphviz DOT: one node per instruction, labelled as XLA's graph dumps label them.

Contract:
- `module_dot(module)` is one digraph holding every computation as a cluster (entry first,
  then the called ones in print order); an instruction that calls a computation has a dashed
  edge to that computation's root, ending at the cluster (`lhead`); each node's tooltip is
  its op_name and source position. `computation_dot(comp,
  ids)` is the graph of one computation (the pages lay out one at a time), and
  `neighbourhood_dot` the graph of a chosen set of instructions with their direct operands
  and users drawn faded (how pages show a part of a large computation).
- A node's label is the instruction's name, opcode and shape; a constant shows its value
  when short; a parameter its number; a collective its replica_groups and channel_id (and
  gather / reduce dimensions). Parameters are ellipses, constants small grey boxes, the
  root has a double border, collectives are violet, ops calling a computation green.
- Edges run operand -> user, emitted in operand order; an instruction with several
  operands labels each edge with the operand index, as XLA does.
- Node ids (`NodeIds`) are `n<k>` in module print order. They become the SVG ids of the
  laid-out nodes, so a page can find the instruction behind a clicked node; `classes` (name
  -> CSS class) becomes Graphviz's `class` attribute (`removed`, `added`, `match`). The
  looks are one table (NODE_STYLES by `node_kind`, ROOT_STYLE, CLASS_STYLES) that the pages
  receive too, so a page draws a node as the .dot file does.
The DOT text is the input of the layout engine (Graphviz, see tilecc/viz/__init__.py).
"""

from __future__ import annotations

from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule
from tilecc.hlo.opcodes import COLLECTIVES, HloOpcode
from tilecc.hlo.printer import computations_in_print_order, instructions_in_print_order
from tilecc.viz.hlo_metadata import StackFrames, source_of

MAX_CONSTANT_LABEL = 24  # longer literals show only their shape: the node would be a wall
GRAPH_ATTRS = ('  graph [rankdir=TB, fontname="Helvetica", fontsize=10, nodesep=0.25, '
                'ranksep=0.35];\n'
                '  node [shape=box, style="rounded,filled", fillcolor="#f5f5f5", '
                'fontname="Helvetica", fontsize=9, margin="0.08,0.03", height=0.3];\n'
                '  edge [fontname="Helvetica", fontsize=8, color="#555555", arrowsize=0.6];\n')
# One table of looks, used by the .dot files and sent to the pages (page.js draws with it).
NODE_STYLES = {"parameter": 'shape=ellipse, fillcolor="#fde0b8"',
               "constant": 'fillcolor="#e4e4e4", fontsize=8',
               "collective": 'fillcolor="#e3d4f5"', "calls": 'fillcolor="#d8eed8"', "op": ""}
ROOT_STYLE = "peripheries=2"
CLASS_STYLES = {
    "removed": 'class="removed", fillcolor="#f8c4c4", penwidth=2',
    "added": 'class="added", fillcolor="#c6efc6", penwidth=2',
    "match": 'class="match", fillcolor="#ffe08a", penwidth=2',
    "context": 'class="context", fontcolor="#888888", color="#bbbbbb", fillcolor="#fbfbfb"'}
_LABELLED_DIMENSIONS = COLLECTIVES | {HloOpcode.REDUCE}
HUB_USERS = 6
"""An operand with more drawn users than this is drawn as a small copy beside each user
(COPY_STYLE) instead of one long edge per user: dot's layout is superlinear in long edges,
measured on a chain of 100 ops all using one parameter: 119 s with the edges, against
milliseconds with copies (tilecc/viz/__init__.py)."""
COPY_STYLE = 'class="copy", style="rounded,dashed", fontsize=8, height=0.2, color="#999999"'



class NodeIds:
    """Instruction -> `<prefix><k>`, numbered in module print order (stable for one module;
    a before / after page numbers the two modules with different prefixes)."""

    def __init__(self, module: HloModule, prefix: str = "n") -> None:
        self.prefix = prefix
        self.by_inst: dict[HloInstruction, str] = {}
        self.order: list[HloInstruction] = []
        self.computations = computations_in_print_order(module)
        for comp in self.computations:
            for inst in instructions_in_print_order(comp):
                self.by_inst[inst] = f"{prefix}{len(self.order)}"
                self.order.append(inst)

    def __getitem__(self, inst: HloInstruction) -> str:
        return self.by_inst[inst]


def quote(text: str) -> str:
    """A DOT double-quoted string (Graphviz's escapes: backslash and quote)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def instruction_label(inst: HloInstruction) -> str:
    """Name, opcode (parameter number, short constant), shape, then the collective's groups,
    channel and dimensions, one per line."""
    opcode = inst.opcode
    if opcode is HloOpcode.PARAMETER:
        what = f"parameter {inst.parameter_number}"
    elif opcode is HloOpcode.CONSTANT and inst.literal_text is not None \
            and len(inst.literal_text) <= MAX_CONSTANT_LABEL:
        what = f"constant {inst.literal_text}"
    else:
        what = opcode.mnemonic
    label = f"{inst.name}\n{what}\n{inst.shape.to_text()}"
    if inst.replica_groups is not None:
        label += f"\nreplica_groups={inst.replica_groups.to_text()}"
    if inst.channel_id is not None:
        label += f"\nchannel_id={inst.channel_id}"
    if inst.dimensions is not None and opcode in _LABELLED_DIMENSIONS:
        label += "\ndimensions={" + ",".join(map(str, inst.dimensions)) + "}"
    return label


def node_kind(inst: HloInstruction) -> str:
    """The row of NODE_STYLES an instruction is drawn with."""
    opcode = inst.opcode
    if opcode is HloOpcode.PARAMETER:
        return "parameter"
    if opcode is HloOpcode.CONSTANT:
        return "constant"
    if opcode in COLLECTIVES:
        return "collective"
    if inst.to_apply is not None or inst.calls or inst.condition is not None \
            or inst.branch_computations:
        return "calls"
    return "op"


def node_attributes(inst: HloInstruction, node_id: str, css_class: str | None,
                    label: str | None = None, tooltip: str | None = None) -> str:
    attrs = f"id={quote(node_id)}, label={quote(label or instruction_label(inst))}"
    if tooltip:
        attrs += f", tooltip={quote(tooltip)}"
    if style := NODE_STYLES[node_kind(inst)]:
        attrs += ", " + style
    if inst.parent is not None and inst.parent.root is inst:
        attrs += ", " + ROOT_STYLE
    if css_class is not None:
        attrs += ", " + CLASS_STYLES[css_class]
    return attrs


def tooltip(inst: HloInstruction, frames: StackFrames) -> str:
    """op_name and source position: what an SVG viewer shows on hover."""
    source = source_of(inst, frames)
    return "\n".join(t for t in (source.op_name, source.position()) if t)


def _edges(insts: list[HloInstruction], ids: NodeIds, drawn: set[HloInstruction]
           ) -> list[str]:
    """Operand -> user edges in operand order; a hub operand (HUB_USERS) gets copies."""
    uses: dict[HloInstruction, int] = {}
    for inst in insts:
        for operand in inst.operands:
            if operand in drawn:
                uses[operand] = uses.get(operand, 0) + 1
    out = []
    for inst in insts:
        many = len(inst.operands) > 1
        for index, operand in enumerate(inst.operands):
            if operand not in drawn:
                continue
            label = f" [label={index}]" if many else ""
            source = ids[operand]
            if uses[operand] > HUB_USERS:
                source = f"{ids[operand]}c{ids[inst]}"
                out.append(f"  {source} [label={quote(operand.name)}, {COPY_STYLE}];\n")
            out.append(f"  {source} -> {ids[inst]}{label};\n")
    return out


def computation_dot(comp: HloComputation, ids: NodeIds,
                    classes: dict[str, str] | None = None) -> str:
    """The graph of one computation, every instruction a node."""
    insts = instructions_in_print_order(comp)
    classes = classes or {}
    parts = [f"digraph {quote(comp.name)} {{\n", GRAPH_ATTRS]
    parts += [f"  {ids[i]} [{node_attributes(i, ids[i], classes.get(i.name))}];\n" for i in insts]
    parts += _edges(insts, ids, set(insts))
    parts.append("}\n")
    return "".join(parts)


def neighbourhood_dot(title: str, core: list[HloInstruction], ids: NodeIds,
                      classes: dict[str, str] | None = None) -> str:
    """`core` with its direct operands and users (faded) and the edges among all of them."""
    classes = classes or {}
    core_set = set(core)
    context: list[HloInstruction] = []
    seen = set(core_set)
    for inst in core:
        for other in (*inst.operands, *inst.users):
            if other not in seen:
                seen.add(other)
                context.append(other)
    parts = [f"digraph {quote(title)} {{\n", GRAPH_ATTRS]
    parts += [f"  {ids[i]} [{node_attributes(i, ids[i], classes.get(i.name))}];\n" for i in core]
    parts += [f"  {ids[i]} [{node_attributes(i, ids[i], 'context')}];\n" for i in context]
    parts += _edges([*core, *context], ids, seen)
    parts.append("}\n")
    return "".join(parts)


def module_dot(module: HloModule, ids: NodeIds | None = None) -> str:
    """The whole module: a cluster per computation, dashed links to called computations."""
    ids = ids or NodeIds(module)
    comps = ids.computations
    comps = [module.entry, *(c for c in comps if c is not module.entry)] \
        if module.entry in comps else comps
    frames = StackFrames.parse(module.stack_frames)
    parts = [f"digraph {quote(module.name)} {{\n  compound=true;\n", GRAPH_ATTRS]
    for k, comp in enumerate(comps):
        insts = instructions_in_print_order(comp)
        title = ("ENTRY " if comp is module.entry else "") + comp.name
        parts.append(f"  subgraph cluster_{k} {{\n    label={quote(title)}; "
                     f'style="rounded"; color="#999999";\n')
        parts += [f"    {ids[i]} [{node_attributes(i, ids[i], None, None, tooltip(i, frames))}];\n"
                  for i in insts]
        parts += _edges(insts, ids, set(insts))
        parts.append("  }\n")
    cluster_of = {comp: k for k, comp in enumerate(comps)}
    for comp in comps:
        for inst in instructions_in_print_order(comp):
            for callee in inst.called_computations():
                if callee.root is not None and callee in cluster_of:
                    parts.append(f"  {ids[inst]} -> {ids[callee.root]} [style=dashed, "
                                 f"lhead=cluster_{cluster_of[callee]}, "
                                 f'color="#3a8a3a"];\n')
    parts.append("}\n")
    return "".join(parts)
