"""HLO -> DOT: labels as XLA's graphs, edges in operand order, clusters and call links;
metadata -> op_name and source positions."""

from __future__ import annotations

import re
from pathlib import Path

from tilecc.hlo.parser import parse_module
from tilecc.viz.hlo_dot import NodeIds, computation_dot, instruction_label, module_dot, quote
from tilecc.viz.hlo_metadata import StackFrames, metadata_fields, source_of

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hlo"

MODULE = """HloModule m, replica_count=4

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY e {
  p = s32[] parameter(0)
  big = s32[16] constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
  k = s32[] constant(-7), metadata={op_name="jit(f)/\\"quoted\\"" source_file="/a/b.py" source_line=12}
  d = s32[] subtract(k, p)
  ROOT ar = s32[] all-reduce(d), channel_id=3, replica_groups={{0,1},{2,3}}, to_apply=add
}
"""


def _node(dot: str, ids: NodeIds, module, name: str) -> str:
    inst = next(i for c in module.computations for i in c.instructions if i.name == name)
    line = next(l for l in dot.splitlines() if l.strip().startswith(ids[inst] + " ["))
    return line


def test_labels_distinguish_parameters_constants_and_collectives():
    module = parse_module(MODULE)
    by_name = {i.name: i for c in module.computations for i in c.instructions}
    assert instruction_label(by_name["p"]) == "p\nparameter 0\ns32[]"
    assert instruction_label(by_name["k"]) == "k\nconstant -7\ns32[]"
    assert instruction_label(by_name["big"]) == "big\nconstant\ns32[16]{0}"   # too long to show
    assert instruction_label(by_name["ar"]) == \
        "ar\nall-reduce\ns32[]\nreplica_groups={{0,1},{2,3}}\nchannel_id=3"
    ids = NodeIds(module)
    dot = computation_dot(module.entry, ids)
    assert "shape=ellipse" in _node(dot, ids, module, "p")
    assert "peripheries=2" in _node(dot, ids, module, "ar")       # the root
    assert 'fillcolor="#e3d4f5"' in _node(dot, ids, module, "ar")   # a collective


def test_edges_run_operand_to_user_in_operand_order_with_indices():
    module = parse_module(MODULE)
    ids = NodeIds(module)
    by_name = {i.name: i for c in module.computations for i in c.instructions}
    dot = computation_dot(module.entry, ids)
    k, p, d, ar = (ids[by_name[n]] for n in ("k", "p", "d", "ar"))
    edges = re.findall(r"^\s*(n\d+) -> (n\d+)(?: \[label=(\d+)\])?;", dot, re.M)
    assert edges == [(k, d, "0"), (p, d, "1"), (d, ar, "")]


def test_module_dot_has_a_cluster_per_computation_entry_first_and_call_links():
    module = parse_module(MODULE)
    ids = NodeIds(module)
    dot = module_dot(module, ids)
    clusters = re.findall(r'subgraph cluster_(\d+) \{\n\s*label="([^"]*)"', dot)
    assert clusters == [("0", "ENTRY e"), ("1", "add")]
    by_name = {i.name: i for c in module.computations for i in c.instructions}
    assert f"{ids[by_name['ar']]} -> {ids[by_name['s']]} [style=dashed, lhead=cluster_1" in dot
    assert dot.count("[id=") == module.instruction_count()


def test_quote_escapes_backslashes_quotes_and_newlines():
    assert quote('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


def test_metadata_fields_and_source_file():
    module = parse_module(MODULE)
    k = next(i for i in module.entry.instructions if i.name == "k")
    assert metadata_fields(k.metadata)["op_name"] == 'jit(f)/"quoted"'
    source = source_of(k, StackFrames.parse(module.stack_frames))
    assert (source.op_name, source.position()) == ('jit(f)/"quoted"', "/a/b.py:12")
    assert metadata_fields(None) == {} and metadata_fields("{}") == {}


def test_stack_frame_ids_resolve_to_the_innermost_frame():
    module = parse_module((FIXTURES / "psum_max.spmd.hlo").read_text())
    frames = StackFrames.parse(module.stack_frames)
    reduce = next(i for i in module.entry.instructions if i.name == "reduce")
    source = source_of(reduce, frames)
    assert source.op_name == "jit(psum_max)/reduce_max"
    assert source.file is not None and source.file.endswith("regenerate.py")
    assert source.line is not None and source.line > 0 and source.function
    assert frames.resolve(10_000).position() is None      # an unknown frame id


def test_an_operand_of_many_users_is_drawn_beside_each_user():
    lines = ["HloModule hub", "", "ENTRY e {", "  p = f32[2] parameter(0)", "  x0 = f32[2] negate(p)"]
    lines += [f"  x{i} = f32[2] add(x{i - 1}, p)" for i in range(1, 8)]
    lines += ["  ROOT r = f32[2] negate(x7)", "}"]
    module = parse_module("\n".join(lines) + "\n")
    ids = NodeIds(module)
    dot = computation_dot(module.entry, ids)
    p = ids[module.entry.parameters[0]]
    copies = re.findall(rf'^  {p}cn\d+ \[label="p", class="copy"', dot, re.M)
    assert len(copies) == 8                          # 8 users > HUB_USERS: one copy each
    assert not re.search(rf"^  {p} -> ", dot, re.M)  # and no long edge from p itself
    assert re.search(rf"^  {p} \[id=", dot, re.M)    # p is still drawn once as itself
