"""Pictures of every stage: HLO graphs, before / after pages of a pass, kernel reports.

This package sits on top of the IR levels: it imports tilecc.hlo, passes, klr, bir, codegen
and sim; nothing there imports it. Commands call it behind their picture flags
(`hlo-opt --dump-format`, `hlo-graph`, `run kernel.py:fn --html`, `codegen --html`,
`demo --html`).

Layout engine (decided by measurement, figures in the README "Pictures" section):
Graphviz's `dot`, as the WebAssembly build @viz-js/viz from the npm registry, embedded in
each page and run by the browser (and under node for `hlo-graph -o g.svg`). It draws
XLA-like labelled nodes and clusters, and no native Graphviz or wheel has to exist on the
machine. Python only writes DOT and data, so writing a page stays linear in the module
(bench/viz.py: 0.70x the parse of a 10k-instruction module, 0.75x at 100k). dot is
superlinear in long edges: on bench/hlo_parse.py's 10k-instruction module (every op also
uses one parameter) 300 instructions did not lay out in 5 minutes and 100 took 119 s
(elkjs, the other npm candidate, took 52 s on those 300: layered layout has the same
weakness, and its nodes carry no labels of their own); with
that parameter drawn as a copy beside each user (hlo_dot.HUB_USERS) 100 take 0.6 s and
1,000 take 1.9 s. So a page never asks the engine for a big graph: hub operands are copied,
a computation of more than page.js's LAYOUT_LIMIT instructions is shown by the
neighbourhood (the instruction, its operands and users, capped) of whatever the user
picks, and a pass's matches each by their own before / after neighbourhood.

Files: hlo_dot (DOT text), hlo_metadata (op_name / source positions), hlo_views (page
data for modules and passes), pass_record (a pass run with its matches), dump (hlo-opt
dumps), kernel_views (kernel source / KLR / BIR report), bir_deps (BIR dependencies
through memory), plots (matplotlib heat maps), page (+ page.js, page.css: the document),
assets (the npm engine), svg (DOT -> SVG under node), browser (headless Chromium).
"""
