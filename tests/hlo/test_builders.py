"""Builders infer shapes like XLA's hlo_creation_utils and add unique instructions."""

from __future__ import annotations

import pytest

from tilecc.errors import VerifyError
from tilecc.hlo.builders import (create_all_gather, make_binary, make_broadcast, make_reduce,
                                 make_reshape, make_slice)
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.replica_groups import ReplicaGroups
from tilecc.hlo.types import PrimitiveType, Shape
from tilecc.hlo.verifier import verify_module

TEXT = """HloModule b, replica_count=4
mx {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  x = s32[256,64] parameter(0)
  s = s32[] parameter(1)
  init = s32[] constant(-2147483648)
  ROOT r = s32[] reduce(x, init), dimensions={0,1}, to_apply=mx
}
"""


def setup() -> tuple:
    m = parse_module(TEXT)
    i = {x.name: x for x in m.entry.instructions}
    return m, i


def test_two_stage_reduce_like_spec_000() -> None:
    m, i = setup()
    meta = '{op_name="r"}'
    rs = make_reshape(Shape.array(PrimitiveType.S32, (128, 128)), i["x"], meta)
    r1 = make_reduce(rs, i["init"], [1], m.computations[0], meta)
    b1 = make_binary(HloOpcode.MAXIMUM, r1, r1, meta)
    r2 = make_reduce(b1, i["init"], [0], m.computations[0], meta)
    out = make_reshape(i["r"].shape, r2, meta)
    assert (rs.name, r1.name, b1.name, r2.name, out.name) == (
        "reshape", "reduce", "maximum", "reduce.1", "reshape.1")
    assert r1.shape.to_text() == "s32[128]{0}" and r2.shape.to_text() == "s32[]"
    assert r1.dimensions == (1,) and r1.to_apply is m.computations[0]
    assert b1.operands == [r1, r1] and r1.users == [b1] and b1.users == [r2]
    assert all(x.metadata == meta for x in (rs, r1, b1, r2, out))
    m.entry.replace_instruction(i["r"], out)
    verify_module(m)
    assert "%reduce.1 = s32[] reduce(%maximum, %init), dimensions={0}, to_apply=%mx" in \
        print_module(m)


def test_int_all_reduce_rewrite_shapes() -> None:
    m, i = setup()
    scalar = make_reshape([], i["s"])
    b = make_broadcast(scalar, [], [2])
    assert b.shape.to_text() == "s32[2]{0}" and b.dimensions == ()
    groups = ReplicaGroups.iota(1, 4, (4,))
    ag = create_all_gather(Shape.array(PrimitiveType.S32, (8,)), b, 0, groups, False, 1, True)
    assert m.entry.add_instruction(ag) is ag
    assert (ag.dimensions, ag.channel_id, ag.use_global_device_ids) == ((0,), 1, True)
    first = make_slice(ag, [0], [2])
    lane = make_slice(first, [1], [2])
    assert lane.shape.to_text() == "s32[1]{0}" and lane.slice_strides == (1,)
    strided = make_slice(i["x"], [0, 1], [256, 64], [3, 2])
    assert strided.shape.dims == (86, 32)
    text = print_module(m)
    assert ("%all-gather = s32[8]{0} all-gather(%broadcast), channel_id=1, replica_groups="
            "[1,4]<=[4], dimensions={0}, use_global_device_ids=true") in text
    verify_module(m)


@pytest.mark.parametrize("build,fragment", [
    (lambda i: make_reshape([3], i["s"]), "has 1 elements"),
    (lambda i: make_broadcast(i["s"], [0], [2]), "rank 0 but 1 broadcast"),
    (lambda i: make_broadcast(i["x"], [0, 1], [64, 256]), "cannot map"),
    (lambda i: make_slice(i["x"], [0, 0], [257, 64]), "does not fit dimension 0"),
    (lambda i: make_binary(HloOpcode.ADD, i["x"], i["s"]), "operands differ"),
    (lambda i: make_binary(HloOpcode.COMPARE, i["s"], i["s"]), "needs its own builder"),
    (lambda i: make_binary(HloOpcode.NEGATE, i["s"], i["s"]), "not an elementwise binary"),
    (lambda i: make_reduce(i["x"], i["x"], [0], None), "must be a scalar"),
    (lambda i: make_reduce(i["x"], i["s"], [2], None), "do not fit rank 2"),
    (lambda i: create_all_gather(Shape.array(PrimitiveType.S32, (3,)), make_broadcast(
        i["s"], [], [2]), 0, ReplicaGroups.from_groups([[0, 1]]), False, None, False),
     "gives dimension 4, not 3"),
])
def test_builder_preconditions(build, fragment: str) -> None:
    _, i = setup()
    with pytest.raises(VerifyError, match=fragment):
        build(i)


def test_all_gather_size_follows_the_group_mode() -> None:
    """participants_per_group (XLA's GetSubgroupSize): channel_id without global ids spans
    every partition; with global ids the group's own size counts."""
    m = parse_module(TEXT.replace("replica_count=4", "replica_count=2, num_partitions=2"))
    i = {x.name: x for x in m.entry.instructions}
    scalar = make_reshape([1], i["s"])
    groups = ReplicaGroups.from_groups([[0, 1]])
    s32 = PrimitiveType.S32
    ag = create_all_gather(Shape.array(s32, (4,)), scalar, 0, groups, False, 3, False)
    with pytest.raises(VerifyError, match="groups of 4"):
        create_all_gather(Shape.array(s32, (2,)), scalar, 0, groups, False, 3, False)
    flat = create_all_gather(Shape.array(s32, (2,)), scalar, 0, groups, False, 4, True)
    replicas = create_all_gather(Shape.array(s32, (2,)), scalar, 0, groups, False, None, False)
    for x in (ag, flat, replicas):
        assert x.users == []
    root = make_reshape([], make_slice(ag, [0], [1]))
    m.entry.replace_instruction(i["r"], make_binary(HloOpcode.ADD, root, root))
    verify_module(m)
