// tilecc pages: the views a page is made of (module graphs, pass before/after, kernel
// report). Each <section data-view=KIND> carries its data as JSON in a child
// <script type="application/json">; layout is Graphviz (viz-js, embedded before this script).
// Graphs over LAYOUT_LIMIT nodes are never laid out whole on load: the page shows the
// neighbourhood of what the user picks instead (Graphviz's dot is superlinear there).
"use strict";

const LAYOUT_LIMIT = 200;
const CONTEXT_LIMIT = 24;   // faded operands / users drawn around a neighbourhood, per node
const vizReady = (typeof Viz !== "undefined") ? Viz.instance() : null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") node.textContent = v; else node.setAttribute(k, v);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

// `suffix` (neighbourhood graphs) keeps SVG ids unique when an instruction is drawn twice;
// clicks get the instruction's node id either way.
function layout(box, dot, onClick, suffix) {
  if (!vizReady) {
    box.textContent = "(no layout engine in this page: see the note at the top)";
    return Promise.resolve(null);
  }
  box.textContent = "laying out\u2026";
  return vizReady.then(viz => {
    const svg = viz.renderSVGElement(dot);
    box.replaceChildren(svg);
    box.dataset.rendered = "1";
    for (const g of svg.querySelectorAll("g.node")) {
      const id = g.id;
      if (suffix) g.id = id + suffix;
      g.addEventListener("click", ev => { ev.stopPropagation(); onClick(id); });
    }
    return svg;
  }).catch(err => { box.textContent = "layout failed: " + err; });
}

// Small pages lay out everything at once; large ones only what scrolls into view.
function whenVisible(box, fn) {
  if (document.body.dataset.eager === "1") { fn(); return; }
  const seen = new IntersectionObserver(entries => {
    if (entries.some(e => e.isIntersecting)) { seen.disconnect(); fn(); }
  });
  seen.observe(box);
}

// ---------------------------------------------------------------- HLO modules

function dotQuote(text) {   // Graphviz's escapes, as tilecc.viz.hlo_dot.quote
  return '"' + text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n") + '"';
}

class Module {
  // data: {prefix, graph, styles, root_style, classes, comps: [{name, entry, insts}],
  //        frames: {id: "file:line (function)"},
  //        insts: [[name, comp, label, kind, root, operands, line, calls]]}
  constructor(data) {
    this.d = data;
    this.users = data.insts.map(() => []);
    data.insts.forEach((inst, k) => inst[5].forEach(o => this.users[o].push(k)));
  }
  id(k) { return this.d.prefix + k; }
  index(id) { return parseInt(id.slice(this.d.prefix.length), 10); }   // copies: <id>c<user>
  nodeLine(k, cls) {
    const [, , label, kind, root] = this.d.insts[k];
    let attrs = `id="${this.id(k)}", label=${dotQuote(label)}`;
    for (const style of [this.d.styles[kind], root ? this.d.root_style : "", cls ? this.d.classes[cls] : ""]) {
      if (style) attrs += ", " + style;
    }
    return `  ${this.id(k)} [${attrs}];\n`;
  }
  // An operand used by more than hub_users drawn nodes gets a small copy beside each user
  // instead of one long edge per user (tilecc.viz.hlo_dot: dot's layout explodes on those).
  edges(ks, drawn) {
    const uses = new Map();
    for (const k of ks) for (const o of this.d.insts[k][5]) if (drawn.has(o)) uses.set(o, (uses.get(o) || 0) + 1);
    let out = "";
    for (const k of ks) {
      const ops = this.d.insts[k][5];
      ops.forEach((o, i) => {
        if (!drawn.has(o)) return;
        const label = ops.length > 1 ? ` [label=${i}]` : "";
        let from = this.id(o);
        if (uses.get(o) > this.d.hub_users) {
          from = `${this.id(o)}c${k}`;
          out += `  ${from} [label=${dotQuote(this.d.insts[o][0])}, ${this.d.copy_style}];\n`;
        }
        out += `  ${from} -> ${this.id(k)}${label};\n`;
      });
    }
    return out;
  }
  // The graph of `core` (every node drawn, classes from `classes`), with the direct
  // operands and users of core nodes drawn faded when `context` is set.
  dot(core, classes, context) {
    const drawn = new Set(core);
    const extra = [];
    if (context) {
      for (const k of core) {
        for (const list of [this.d.insts[k][5], this.users[k]]) {
          let added = 0;
          for (const o of list) {
            if (drawn.has(o) || added >= CONTEXT_LIMIT) continue;
            drawn.add(o); extra.push(o); added++;
          }
        }
      }
    }
    let dot = "digraph g {\n" + this.d.graph;
    for (const k of core) dot += this.nodeLine(k, classes[k]);
    for (const k of extra) dot += this.nodeLine(k, "context");
    return dot + this.edges([...core, ...extra], drawn) + "}\n";
  }
}

// op_name and source position from an HLO line's metadata (tilecc.viz.hlo_metadata's rule:
// source_file / source_line, else the stack frame named by stack_frame_id).
function sourceOf(line, frames) {
  const at = line.indexOf("metadata={");
  if (at < 0) return [null, null];
  const meta = line.slice(at);
  const quoted = key => {
    const m = meta.match(new RegExp(key + '="((?:[^"\\\\]|\\\\.)*)"'));
    return m ? m[1].replace(/\\(.)/g, "$1") : null;
  };
  const file = quoted("source_file");
  let where = null;
  if (file !== null) {
    const l = meta.match(/source_line=(\d+)/);
    where = l ? `${file}:${l[1]}` : file;
  } else {
    const f = meta.match(/stack_frame_id=(\d+)/);
    if (f && frames[f[1]]) where = frames[f[1]];
  }
  return [quoted("op_name"), where];
}

function detailsPanel(mod, panel, k) {
  const [name, comp, , , , operands, line, calls] = mod.d.insts[k];
  const [opName, source] = sourceOf(line, mod.d.frames);
  const link = o => {
    const a = el("a", {href: "#", text: "%" + mod.d.insts[o][0]});
    a.addEventListener("click", ev => { ev.preventDefault(); panel.show(o); });
    return a;
  };
  const row = (label, value) => value ? el("div", {}, el("b", {text: label + ": "}), value) : null;
  const ops = operands.length ? el("span", {}) : null;
  operands.forEach((o, i) => { if (i) ops.append(", "); ops.append(link(o)); });
  const users = mod.users[k].length ? el("span", {}) : null;
  mod.users[k].slice(0, 50).forEach((u, i) => { if (i) users.append(", "); users.append(link(u)); });
  panel.box.replaceChildren(
    el("div", {class: "detail-name", text: "%" + name + "  (" + mod.d.comps[comp].name + ")"}),
    el("pre", {class: "hlo-text", text: line}),
    row("op_name", opName), row("source", source), row("operands", ops), row("users", users),
    row("calls", calls.length ? el("span", {}, ...calls.map(c =>
      el("a", {href: "#C-" + mod.d.prefix + c, text: mod.d.comps[c].name + " "}))) : null));
}

function moduleListing(mod, ci, onPick) {
  const comp = mod.d.comps[ci];
  const box = el("details", {class: "listing"}, el("summary", {text: `HLO text (${comp.insts.length} lines)`}));
  const fill = () => {
    if (box.dataset.filled) return;
    box.dataset.filled = "1";
    const pre = el("div", {class: "lines"});
    for (const k of comp.insts) {
      const div = el("div", {class: "line", id: "L-" + mod.id(k), text: mod.d.insts[k][6]});
      div.addEventListener("click", () => onPick(k));
      pre.append(div);
    }
    box.append(pre);
  };
  box.addEventListener("toggle", fill);
  box.fill = fill;
  return box;
}

// The graphs of every computation of `mod` (classes: index -> css class), whole when small,
// else by neighbourhood of a picked instruction.
function computationGraphs(host, mod, classes, panel, label) {
  host.append(el("h3", {text: label}));
  const order = mod.d.comps.map((c, ci) => ci);
  order.sort((x, y) => mod.d.comps[y].entry - mod.d.comps[x].entry);   // ENTRY first
  order.forEach(ci => {
    const comp = mod.d.comps[ci];
    const big = comp.insts.length > LAYOUT_LIMIT;
    const title = (comp.entry ? "ENTRY " : "") + comp.name + ` \u2014 ${comp.insts.length} instructions`;
    const graph = el("div", {class: "gbox whole", "data-comp": comp.name});
    const wrap = el("div", {class: "computation", id: "C-" + mod.d.prefix + ci}, el("h4", {text: title}));
    const pick = k => {
      panel.show(k);
      if (big) {
        graph.classList.remove("whole");
        graph.classList.add("neighbourhood");
        layout(graph, mod.dot([k], classes, true), id => pick(mod.index(id)), "-near");
      }
    };
    panel.pickers[ci] = pick;
    const listing = moduleListing(mod, ci, pick);
    if (big) {
      graph.textContent = `too many instructions to lay out at once (> ${LAYOUT_LIMIT}): pick one ` +
        "in the HLO text or a match above to see its neighbourhood";
      listing.open = true; listing.fill();
    } else {
      whenVisible(graph, () => layout(graph, mod.dot(comp.insts, classes, false), id => pick(mod.index(id))));
    }
    wrap.append(graph, listing);
    host.append(wrap);
  });
}

class Panel {
  constructor(mod, box) { this.mod = mod; this.box = box; this.pickers = {}; }
  show(k) {
    detailsPanel(this.mod, this, k);
    for (const old of document.querySelectorAll(`.selected[data-mod="${this.mod.d.prefix}"]`)) {
      old.classList.remove("selected"); delete old.dataset.mod;
    }
    for (const node of [document.getElementById(this.mod.id(k)), document.getElementById("L-" + this.mod.id(k))]) {
      if (node) { node.classList.add("selected"); node.dataset.mod = this.mod.d.prefix; }
    }
  }
}

function initModuleView(section, data) {
  const mod = new Module(data.module);
  const panel = new Panel(mod, el("div", {class: "details", text: "click a node for its HLO line"}));
  const host = el("div", {class: "graphs"});
  section.append(panel.box, host);
  computationGraphs(host, mod, {}, panel, data.module.name);
}

function initPassView(section, data) {
  const before = new Module(data.before), after = new Module(data.after);
  const clsBefore = {}, clsAfter = {};
  for (const m of data.matches) {
    m.removed.forEach(k => { clsBefore[k] = "removed"; });
    clsBefore[m.match] = "match";
    m.added.forEach(k => { clsAfter[k] = "added"; });
  }
  const head = el("div", {class: "pass-head"});
  head.append(el("div", {}, el("b", {text: "pass: "}), data.pass + (data.changed ? " (changed)" : " (no change)")));
  if (data.verdict) head.append(el("div", {class: "verdict " + (data.verdict.ok ? "ok" : "bad")}, el("b", {text: "--verify: "}), data.verdict.text));
  const list = el("ol", {class: "matches"});
  data.matches.forEach((m, j) => {
    const a = el("a", {href: `#M-${data.before.prefix}${j}`, text: `%${before.d.insts[m.match][0]}`});
    list.append(el("li", {}, a, ` in ${m.comp}: ${m.removed.length} removed, ${m.added.length} added`));
  });
  head.append(el("div", {}, el("b", {text: `${data.matches.length} match(es)`}), list));
  section.append(head);
  const panels = el("div", {class: "side-by-side"});
  const pb = new Panel(before, el("div", {class: "details", text: "before: click a node"}));
  const pa = new Panel(after, el("div", {class: "details", text: "after: click a node"}));
  panels.append(pb.box, pa.box);
  section.append(panels);
  data.matches.forEach((m, j) => {
    const gb = el("div", {class: "gbox neighbourhood"}), ga = el("div", {class: "gbox neighbourhood"});
    const block = el("div", {class: "match-block", id: `M-${data.before.prefix}${j}`},
      el("h4", {text: `match ${j + 1}: %${before.d.insts[m.match][0]}`}),
      el("div", {class: "side-by-side"}, gb, ga));
    section.append(block);
    whenVisible(block, () => {
      layout(gb, before.dot([m.match, ...m.removed.filter(k => k !== m.match)], clsBefore, true), id => pb.show(before.index(id)), `-m${j}`);
      layout(ga, after.dot(m.added, clsAfter, true), id => pa.show(after.index(id)), `-m${j}`);
    });
  });
  const whole = el("div", {class: "side-by-side"});
  const hb = el("div", {class: "side before"}), ha = el("div", {class: "side after"});
  whole.append(hb, ha);
  section.append(el("h3", {text: "whole module"}), whole);
  computationGraphs(hb, before, clsBefore, pb, "before");
  computationGraphs(ha, after, clsAfter, pa, "after");
}

// ---------------------------------------------------------------- kernels

function initKernelView(section, data) {
  const cols = el("div", {class: "three"});
  const mk = (title, rows, kind) => {
    const box = el("div", {class: "col"}, el("h4", {text: title}));
    const lines = el("div", {class: "lines"});
    rows.forEach((text, i) => lines.append(el("div", {class: "line", id: `${data.prefix}${kind}-${i}`, "data-kind": kind, "data-i": i, text})));
    box.append(lines);
    cols.append(box);
    return lines;
  };
  mk(`kernel ${data.file}`, data.source.map((t, i) => `${String(data.first_line + i).padStart(4)}  ${t}`), "src");
  mk("KLR", data.klr.map(o => o.text), "klr");
  mk("BIR", data.bir.map(b => b.text), "bir");
  const clear = () => section.querySelectorAll(".hl").forEach(n => n.classList.remove("hl"));
  const mark = (kind, i) => {
    const node = document.getElementById(`${data.prefix}${kind}-${i}`);
    if (node) { node.classList.add("hl"); return node; }
    return null;
  };
  const markBir = i => { mark("bir", i); const g = document.getElementById(`${data.prefix}g-${i}`); if (g) g.classList.add("hl"); };
  const pickKlr = j => {
    const op = data.klr[j];
    if (op.line !== null) mark("src", op.line - data.first_line);
    const row = mark("klr", j);
    if (row) row.scrollIntoView({block: "nearest"});
    op.bir.forEach(markBir);
  };
  section.addEventListener("click", ev => {
    const node = ev.target.closest(".line, g.node");
    if (!node) return;
    clear();
    if (node.matches("g.node")) {
      const i = Number(node.id.slice(`${data.prefix}g-`.length));
      pickKlr(data.bir[i].klr);
      return;
    }
    const i = Number(node.dataset.i), kind = node.dataset.kind;
    if (kind === "src") {
      node.classList.add("hl");
      data.klr.forEach((op, j) => { if (op.line === data.first_line + i) pickKlr(j); });
    } else if (kind === "klr") pickKlr(i);
    else pickKlr(data.bir[i].klr);
  });
  section.append(cols);
  const graph = el("div", {class: "gbox whole bir-graph"});
  section.append(el("h4", {text: "BIR dependencies through memory (write -> read, labelled by tensor)"}), graph);
  if (data.bir.length <= LAYOUT_LIMIT) layout(graph, data.dot, () => {});
  else graph.textContent = `${data.bir.length} instructions: too many to lay out at once`;
  if (data.check) {
    const box = el("div", {class: "check " + (data.check.ok ? "ok" : "bad")}, el("h4", {text: "--check"}),
      el("pre", {text: data.check.text}));
    if (data.check.image) box.append(el("img", {src: data.check.image, alt: "output against the reference"}));
    section.append(box);
  }
}

const VIEWS = {module: initModuleView, pass: initPassView, kernel: initKernelView};
for (const section of document.querySelectorAll("section[data-view]")) {
  const data = JSON.parse(section.querySelector("script[type='application/json']").textContent);
  VIEWS[section.dataset.view](section, data);
}
