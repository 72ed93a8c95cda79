"""Pictures of every stage: HLO graphs, before / after pages of a pass, kernel reports.

This package sits on top of the IR levels: it imports tilecc.hlo, passes, klr, bir, codegen
and sim; nothing there imports it. Commands call it behind their picture flags
(`hlo-opt --dump-format`, `hlo-graph`, `run kernel.py:fn --html`, `codegen --html`,
`demo --html`).

Layout engine (decided by measurement, figures in the README "Pictures" section):
Graphviz's `dot`, as the WebAssembly build @viz-js/viz from the npm registry, embedded in
each page and run by the browser (and under node for `hlo-graph -o g.svg`). Python only
writes DOT and data, so writing a page stays linear in the module (bench/viz.py: below the
parse time of the same module), and no native Graphviz or wheel has to exist on the
machine. dot is superlinear in the graph, above all in long edges (a parameter used by
thousands of instructions becomes thousands of virtual nodes): on bench/hlo_parse.py's
module it does not lay out 300 instructions within 5 minutes. elkjs (the other npm
candidate) lays out by the same layered method and shares the weakness, so the choice is
Graphviz for its labels and clusters, and the pages never ask any engine for a big graph:
a computation of more than page.js's LAYOUT_LIMIT instructions is shown by the
neighbourhood (the instruction, its operands and users, capped) of whatever the user
picks, a pass's matches each by their own before / after neighbourhood.

Files: hlo_dot (DOT text), hlo_metadata (op_name / source positions), hlo_views (page
data for modules and passes), pass_record (a pass run with its matches), dump (hlo-opt
dumps), kernel_views (kernel source / KLR / BIR report), bir_deps (BIR dependencies
through memory), plots (matplotlib heat maps), page (+ page.js, page.css: the document),
assets (the npm engine), svg (DOT -> SVG under node), browser (headless Chromium).
"""
