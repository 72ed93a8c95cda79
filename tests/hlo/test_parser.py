"""Parser features on hand-written text: both forms, comments, operand shapes, attributes."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tilecc.errors import ParseError
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.types import Layout
from tilecc.hlo.verifier import verify_module

LONG = """HloModule long_form, is_scheduled=true, entry_computation_layout={(s32[8]{0}, f32[2,3]{1,0})->(s32[2]{0}, s32[])}, input_output_alias={ {0}: (0, {}, may-alias) }, frontend_attributes={xla.sdy.meshes="m"}, replica_count=2, num_partitions=4

%add.clone (x: s32[], y: s32[]) -> s32[] {
  %x = s32[] parameter(0)
  %y = s32[] parameter(1)
  ROOT %sum = s32[] add(s32[] %x, s32[] %y)
}

ENTRY %main (p0: s32[8], p1: f32[2,3]) -> (s32[2], s32[]) {
  %p0 = s32[8]{0} parameter(0), sharding={replicated}
  %p1 = f32[2,3]{1,0} parameter(1)
  // a line comment
  %slice = s32[2]{0} slice(s32[8]{0} %p0), slice={[1:7:3]}
  %zero = s32[] constant(0) /* a block comment */
  %ar = s32[] all-reduce(%zero), channel_id=3, replica_groups=[2,4]<=[4,2]T(1,0), use_global_device_ids=true, to_apply=%add.clone, metadata={op_name="jit(f)/psum" source_file="/a/b.py" source_line=7}
  %t = (s32[2]{0}, s32[], f32[2,3]{1,0}) tuple(%slice, /*index=1*/%ar, %p1), control-predecessors={%zero}
  %gte = s32[2]{0} get-tuple-element(%t), index=0
  %gte.1 = s32[] get-tuple-element(%t), index=1
  ROOT %out = (s32[2]{0}, s32[]) tuple(%gte, %gte.1)
}
"""


def test_long_form_with_everything() -> None:
    m = parse_module(LONG)
    assert (m.replica_count, m.num_partitions) == (2, 4)
    assert m.header_attributes == {"is_scheduled": "true"}
    assert m.input_output_alias == "{ {0}: (0, {}, may-alias) }"
    assert m.frontend_attributes == '{xla.sdy.meshes="m"}'
    assert m.entry.name == "main" and m.entry.root.name == "out"
    insts = {i.name: i for i in m.entry.instructions}
    s = insts["slice"]
    assert (s.slice_starts, s.slice_limits, s.slice_strides) == ((1,), (7,), (3,))
    ar = insts["ar"]
    assert ar.channel_id == 3 and ar.use_global_device_ids and not ar.constrain_layout
    assert ar.replica_groups.groups() == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert ar.to_apply is m.computations[0]
    assert ar.metadata == '{op_name="jit(f)/psum" source_file="/a/b.py" source_line=7}'
    assert [o.name for o in insts["t"].operands] == ["slice", "ar", "p1"]
    assert insts["t"].control_predecessors == [insts["zero"]]
    assert insts["zero"].control_successors == [insts["t"]]
    assert insts["gte.1"].tuple_index == 1
    assert insts["p0"].attributes == {"sharding": "{replicated}"}
    assert insts["zero"].users == [ar]
    assert set(insts["t"].users) == {insts["gte"], insts["gte.1"]}


def test_long_form_prints_back_canonically() -> None:
    printed = print_module(parse_module(LONG))
    assert "%slice = s32[2]{0} slice(%p0), slice={[1:7:3]}" in printed
    assert "tuple(%slice, %ar, %p1), control-predecessors={%zero}" in printed
    assert printed.splitlines()[0] == LONG.splitlines()[0]
    assert ("%ar = s32[] all-reduce(%zero), channel_id=3, replica_groups=[2,4]<=[4,2]T(1,0), "
            "use_global_device_ids=true, to_apply=%add.clone, metadata={op_name=") in printed
    assert print_module(parse_module(printed)) == printed


def test_short_form_names_layouts_and_last_computation_entry() -> None:
    m = parse_module("""HloModule short
r {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  ROOT m = u8[] maximum(a, b)
}
main {
  x = u8[4,2] parameter(0)
  i = u8[] constant(0)
  ROOT y = u8[2] reduce(x, i), dimensions={0}, to_apply=r
}
""")
    assert m.entry.name == "main"
    x = m.entry.parameters[0]
    assert x.shape.layout == Layout((1, 0))
    assert m.entry.root.dimensions == (0,)


def test_shapes_dynamic_tiled_tuple_token() -> None:
    m = parse_module("""HloModule shapes
ENTRY e {
  a = f32[<=4,8]{1,0:T(8,128)} parameter(0)
  t = token[] after-all()
  ROOT r = (f32[<=4,8]{1,0:T(8,128)}, token[], (s32[], pred[])) tuple(a, t, c)
  c = (s32[], pred[]) parameter(1)
}
""".replace("  ROOT r = (f32[<=4,8]{1,0:T(8,128)}, token[], (s32[], pred[])) tuple(a, t, c)\n  c = (s32[], pred[]) parameter(1)\n",
            "  c = (s32[], pred[]) parameter(1)\n  ROOT r = (f32[<=4,8]{1,0:T(8,128)}, token[], (s32[], pred[])) tuple(a, t, c)\n"))
    a = m.entry.parameters[0]
    assert a.shape.dynamic_dims == (True, False)
    assert a.shape.layout == Layout((1, 0), "T(8,128)")
    root = m.entry.root
    assert root.shape.to_text() == "(f32[<=4,8]{1,0:T(8,128)}, token[], (s32[], pred[]))"
    assert root.shape.tuple_shapes[1].is_token
    assert "ROOT %r = (f32[<=4,8]{1,0:T(8,128)}, token[], (s32[], pred[])) tuple(%a, %t, %c)" \
        in print_module(m)


def test_constants_of_every_kind() -> None:
    m = parse_module("""HloModule c
ENTRY e {
  a = s32[2,2] constant({ { 1, -2 }, { 3, -2147483648 } })
  b = f32[4] constant({inf, -inf, nan, 1e-05})
  c = pred[] constant(true)
  d = bf16[2] constant({1.5, 0.1001})
  e = u32[] constant(4294967295)
  f = s8[0] constant({})
  ROOT t = (s32[2,2], f32[4], pred[], bf16[2], u32[], s8[0]) tuple(a, b, c, d, e, f)
}
""")
    lit = {i.name: i.literal for i in m.entry.instructions if i.opcode is HloOpcode.CONSTANT}
    assert lit["a"].dtype == np.int32 and lit["a"].tolist() == [[1, -2], [3, -2**31]]
    b = lit["b"]
    assert b.dtype == np.float32 and np.isposinf(b[0]) and np.isneginf(b[1]) and np.isnan(b[2])
    assert b[3] == np.float32(1e-05)
    assert lit["c"].dtype == np.bool_ and bool(lit["c"]) is True
    assert str(lit["d"].dtype) == "bfloat16" and float(lit["d"][1]) == float(np.float32(0.10009765625))
    assert lit["e"] == 2**32 - 1 and lit["e"].dtype == np.uint32
    assert lit["f"].shape == (0,)


def test_fusion_while_conditional_and_async_references() -> None:
    m = parse_module("""HloModule calls
fused {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
cond {
  s = s32[] parameter(0)
  k = s32[] constant(10)
  ROOT lt = pred[] compare(s, k), direction=LT, type=SIGNED
}
body {
  s.1 = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT inc = s32[] add(s.1, one)
}
br0 {
  q = s32[] parameter(0)
  ROOT q1 = s32[] negate(q)
}
br1 {
  q.1 = s32[] parameter(0)
  ROOT q2 = s32[] abs(q.1)
}
ENTRY e {
  x = f32[4] parameter(0)
  i = s32[] parameter(1)
  f = f32[4] fusion(x), kind=kLoop, calls=fused
  w = s32[] while(i), condition=cond, body=body
  pr = pred[] parameter(2)
  c = s32[] conditional(pr, i, i), true_computation=br0, false_computation=br1
  idx = s32[] parameter(3)
  c2 = s32[] conditional(idx, i, i), branch_computations={br0, br1}
  ROOT t = (f32[4], s32[], s32[], s32[]) tuple(f, w, c, c2)
}
""")
    insts = {i.name: i for i in m.entry.instructions}
    comps = {c.name: c for c in m.computations}
    assert insts["f"].calls == [comps["fused"]] and comps["fused"].is_fusion_computation
    assert insts["f"].attributes == {"kind": "kLoop"}
    assert (insts["w"].condition, insts["w"].body) == (comps["cond"], comps["body"])
    assert insts["c"].branch_computations == [comps["br0"], comps["br1"]]
    assert insts["c2"].branch_computations == [comps["br0"], comps["br1"]]
    lt = comps["cond"].root
    assert (lt.comparison_direction, lt.comparison_type) == ("LT", "SIGNED")
    printed = print_module(m)
    assert "true_computation=%br0, false_computation=%br1" in printed
    assert "branch_computations={%br0, %br1}" in printed
    assert [c.name for c in m.non_fusion_computations()] == ["cond", "body", "br0", "br1", "e"]
    post = [c.name for c in m.computations_post_order()]
    assert post.index("fused") < post.index("e") and post[-1] == "e"


def test_replica_group_forms_survive_printing() -> None:
    forms = ["{}", "{{0,1},{2,3}}", "[2,2]<=[4]", "[4,2]<=[2,2,2]T(2,1,0)",
             "mesh['axis_0'=2,'axis_1'=4] {'axis_1'}",
             # a device order after the mesh (auto-partitioned jit dumps), iota and explicit
             "mesh['axis_0'=4,'axis_1'=1,'axis_2'=2], device_ids=([2,4]T(1,0)) {'axis_0'}",
             "mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0) {'a','b'}"]
    for form in forms:
        text = f"""HloModule g, replica_count=8
add {{
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}}
ENTRY e {{
  p = s32[] parameter(0)
  ROOT r = s32[] all-reduce(p), channel_id=1, replica_groups={form}, use_global_device_ids=true, to_apply=add
}}
"""
        m = parse_module(text)
        assert m.entry.root.replica_groups.to_text() == form
        assert f"replica_groups={form}," in print_module(m)


def test_stack_frames_kept_verbatim() -> None:
    text = """HloModule s

FileNames
1 "a.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=1}


ENTRY %e () -> s32[] {
  ROOT %c = s32[] constant(7), metadata={op_name="c" stack_frame_id=1}
}

"""
    m = parse_module(text)
    assert m.stack_frames.startswith("FileNames\n1 \"a.py\"") and m.stack_frames.endswith(
        "parent_frame_id=1}")
    assert print_module(m) == text


def test_execution_thread_and_unknown_attributes_verbatim() -> None:
    text = """HloModule x

%side (a: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  ROOT %cc = f32[2]{0} custom-call(%a), custom_call_target="foo", api_version=API_VERSION_TYPED_FFI, backend_config={"k":[1,{"n":2}]}
}, execution_thread="other"

ENTRY %e (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  ROOT %c = f32[2]{0} custom-call(%p), custom_call_target="bar", called_computations={%side}, frontend_attributes={a="1"}, metadata={op_name="x"}, backend_config="raw"
}

"""
    m = parse_module(text)
    side = m.computations[0]
    assert side.execution_thread == "other"
    assert side.root.attributes["backend_config"] == '{"k":[1,{"n":2}]}'
    assert m.entry.root.calls == [side]
    assert print_module(m) == text


def test_cross_computation_duplicate_names_are_renamed() -> None:
    m = parse_module("""HloModule d
a {
  x = s32[] parameter(0)
  ROOT y = s32[] negate(x)
}
ENTRY b {
  x = s32[] parameter(0)
  ROOT y = s32[] call(x), to_apply=a
}
""")
    assert [i.name for i in m.entry.instructions] == ["x.1", "y.1"]
    assert m.unique_name("x") == "x.2"


def test_operands_with_tuple_shapes_and_tiled_layouts() -> None:
    # As XLA prints with print_operand_shape (e.g. in hlo_parser_test.cc style dumps).
    m = parse_module("""HloModule ops
ENTRY %e (a: s32[1], b: f32[1]) -> s32[1] {
  %a = s32[1]{0:T(128)} parameter(0)
  %b = f32[1]{0:T(128)} parameter(1)
  %t = (s32[1]{0:T(128)}, f32[1]{0:T(128)}) tuple(s32[1]{0:T(128)} %a, f32[1]{0:T(128)} %b), control-predecessors={%a}
  ROOT %g = s32[1]{0:T(128)} get-tuple-element((s32[1]{0:T(128)}, f32[1]{0:T(128)}) %t), index=0
}
""")
    t, g = m.entry.instructions[2:]
    assert [o.name for o in t.operands] == ["a", "b"] and g.operands == [t]
    assert g.tuple_index == 0 and g.shape.layout.tail == "T(128)"
    assert "ROOT %g = s32[1]{0:T(128)} get-tuple-element(%t), index=0" in print_module(m)


def test_forward_computation_reference_prints_callee_first() -> None:
    m = parse_module("""HloModule fwd
ENTRY e {
  p = s32[4] parameter(0)
  c = s32[] constant(0)
  ROOT r = s32[] reduce(p, c), dimensions={0}, to_apply=add
}
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
""")
    assert m.entry.name == "e" and m.entry.root.to_apply.name == "add"
    text = print_module(m)
    assert text.index("%add (") < text.index("ENTRY %e (")
    assert print_module(parse_module(text)) == text


MISC = """HloModule misc, replica_count=2

%fused (p: f32[4,4]) -> f32[4,4] {
  %p = f32[4,4]{1,0} parameter(0)
  ROOT %n = f32[4,4]{1,0} negate(%p)
}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[4,4], y: f32[1,1,8,8], t: (f32[], s32[2])) -> (f32[4,4], f32[1,1,8,8], f32[2,2], f32[4,4], f32[4,4]) {
  %x = f32[4,4]{1,0} parameter(0), sharding={{maximal device=0}}
  %y = f32[1,1,8,8]{3,2,1,0} parameter(1)
  %t = (f32[], s32[2]{0}) parameter(2)
  %k = f32[1,1,3,3]{3,2,1,0} constant({ { { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } } } })
  %conv = f32[1,1,8,8]{3,2,1,0} convolution(%y, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  %dot = f32[4,4]{1,0} dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,default}
  %zero = f32[] constant(0)
  %rw = f32[2,2]{1,0} reduce-window(%x, %zero), window={size=2x2 stride=2x2}, to_apply=%add
  %f = f32[4,4]{1,0} fusion(%dot), kind=kLoop, calls=%fused, backend_config={"outer_dimension_partitions":["2"]}
  %cp = f32[4,4]{1,0} collective-permute(%f), channel_id=2, source_target_pairs={{0,1},{1,0}}
  %ars = f32[4,4]{1,0} all-reduce-start(%cp), channel_id=3, replica_groups={{0,1}}, to_apply=%add
  %ard = f32[4,4]{1,0} all-reduce-done(%ars)
  %after = token[] after-all()
  ROOT %out = (f32[4,4]{1,0}, f32[1,1,8,8]{3,2,1,0}, f32[2,2]{1,0}, f32[4,4]{1,0}, f32[4,4]{1,0}) tuple(%dot, %conv, %rw, %ard, %f), statistics={visualizing_index=1,stat-index-0=0.5}
}
"""


def test_literal_index_comments_of_rank_4_constants() -> None:
    m = parse_module("""HloModule k
ENTRY e {
  ROOT k = f32[1,1,2,2]{3,2,1,0} constant({ { /*i0=0*/ { /*i1=0*/ { 1, 2 }, { 3, 4 } } } })
}
""")
    assert m.entry.root.literal.tolist() == [[[[1, 2], [3, 4]]]]


_XLA_PRINT = r"""
import sys
from jax._src.lib import xla_client
sys.stdout.write(xla_client.hlo.hlo_module_from_text(sys.stdin.read()).to_string())
"""


@pytest.mark.oracle
def test_convolution_dot_window_async_and_statistics_print_exactly_as_xla() -> None:
    """XLA re-prints its own reading of MISC; tilecc must print that text byte for byte."""
    proc = subprocess.run([sys.executable, "-c", _XLA_PRINT], input=MISC, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    xla_text = proc.stdout
    module = parse_module(xla_text)
    verify_module(module)
    assert print_module(module) == xla_text
    insts = {i.name: i for i in module.entry.instructions}
    assert insts["conv"].attributes == {"window": "{size=3x3 pad=1_1x1_1}",
                                        "dim_labels": "bf01_oi01->bf01"}
    assert insts["x"].attributes["sharding"] == "{{maximal device=0}}"
    assert insts["ars"].replica_groups.groups() == [[0, 1]]
    assert insts["k"].literal.shape == (1, 1, 3, 3)


def test_two_instructions_on_one_line() -> None:
    """XLA's parser reads the next instruction after the attributes, newline or not."""
    m = parse_module("HloModule m\nENTRY e {\n  a = s32[] parameter(0) b = s32[] parameter(1), "
                     'metadata={op_name="x"} c = s32[] add(a, b)\n'
                     "  ROOT d = s32[] multiply(c, c) }\n")
    assert [i.name for i in m.entry.instructions] == ["a", "b", "c", "d"]
    assert m.entry.instruction_by_name("b").metadata == '{op_name="x"}'
    assert m.entry.root.operands == [m.entry.instruction_by_name("c")] * 2


def test_async_sugar_reads_as_async_ops_and_prints_back() -> None:
    """`negate-start` / `negate-done` are async-start / async-done wrapping negate (XLA's
    parser and printer sugar); real async collectives keep their own opcodes."""
    text = """HloModule m

ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %s = ((f32[4]{0}), f32[4]{0}, s32[]) negate-start(%x), async_execution_thread="side"
  ROOT %d = f32[4]{0} negate-done(%s)
}

"""
    m = parse_module(text)
    s, d = m.entry.instruction_by_name("s"), m.entry.root
    assert (s.opcode, s.async_wrapped) == (HloOpcode.ASYNC_START, "negate")
    assert (d.opcode, d.async_wrapped) == (HloOpcode.ASYNC_DONE, "negate")
    assert print_module(m) == text
    with pytest.raises(ParseError, match="unknown opcode 'frobnicate-start'"):
        parse_module(text.replace("negate-start", "frobnicate-start"))


def test_trailing_attributes_print_in_xlas_order() -> None:
    """Order checked on XLA's printer: sharding, frontend_attributes, control-predecessors,
    statistics, result_accuracy, origin, metadata, backend_config."""
    line = ("  ROOT %y = f32[8]{0} exponential(%x), sharding={replicated}, frontend_attributes="
            '{k="v"}, control-predecessors={%c}, statistics={visualizing_index=1,stat-1=33}, '
            'result_accuracy={mode=highest}, origin={{"x"}}, metadata={op_name="q"}, '
            'backend_config={"a":1}')
    text = ("HloModule m\n\nENTRY %e (x: f32[8]) -> f32[8] {\n  %x = f32[8]{0} parameter(0)\n"
            "  %c = f32[8]{0} negate(%x)\n" + line + "\n}\n\n")
    shuffled = text.replace(line, "  ROOT %y = f32[8]{0} exponential(%x), backend_config="
                            '{"a":1}, metadata={op_name="q"}, origin={{"x"}}, result_accuracy='
                            "{mode=highest}, statistics={visualizing_index=1,stat-1=33}, "
                            'control-predecessors={%c}, frontend_attributes={k="v"}, '
                            "sharding={replicated}")
    assert print_module(parse_module(shuffled)) == text


def test_slice_strides_print_all_or_none_as_xla() -> None:
    """XLA omits slice strides only when every stride is 1 (seen in a jax dump of x[::2, 1::3]
    on a [6,4] array: `slice={[0:6:2], [1:2:1]}`)."""
    text = """HloModule s
ENTRY e {
  p = s32[8,8] parameter(0)
  a = s32[4,8] slice(p), slice={[0:8:2], [0:8]}
  b = s32[4,8] slice(p), slice={[0:4], [0:8:1]}
  ROOT t = (s32[4,8], s32[4,8]) tuple(a, b)
}
"""
    printed = print_module(parse_module(text))
    assert "slice(%p), slice={[0:8:2], [0:8:1]}" in printed
    assert "slice(%p), slice={[0:4], [0:8]}" in printed
