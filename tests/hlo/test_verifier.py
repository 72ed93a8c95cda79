"""The verifier accepts valid modules and names the instruction and the fault otherwise."""

from __future__ import annotations

import pytest

from tilecc.errors import VerifyError
from tilecc.hlo.parser import parse_module
from tilecc.hlo.verifier import verify_module

HEAD = """HloModule v, replica_count=4
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
ENTRY e {
  p = s32[4,8] parameter(0)
  s = s32[] parameter(1)
  f = f32[4,8] parameter(2)
  t = (s32[], f32[4,8]) parameter(3)
"""


# XLA's ShapeVerifier pairs operand k with result element k and sizes every pair by the
# shard count of pair 0 (a one-member group does not check that count, the pairs still).
# jaxlib's StableHLO route checks less: it compiles the first two refused gathers and
# returns shapes other than declared or unwritten memory (measured, jaxlib 0.10.2), and it
# refuses every tuple reduce-scatter ("requires a single operand").
TUPLE_COLLECTIVES_VALID = [
    "g = s32[4,2] slice(p), slice={[0:4], [0:2]}\n"
    "  ROOT x = (s32[4,8], f32[4,32]) all-gather(g, f), replica_groups={}, dimensions={1}",
    "ROOT x = (s32[4,16], f32[4,16]) all-gather(p, f), replica_groups={{0},{1},{2},{3}}, "
    "dimensions={1}",
    "g = s32[4,4] slice(p), slice={[0:4], [0:4]}\n"
    "  ROOT x = (s32[4,4], s32[4,2]) reduce-scatter(p, g), replica_groups={{0,1},{2,3}}, "
    "dimensions={1}, to_apply=add",
]
TUPLE_COLLECTIVES_INVALID = [
    ("g = s32[4,2] slice(p), slice={[0:4], [0:2]}\n"
     "  ROOT x = (s32[4,8], f32[4,8]) all-gather(g, f), replica_groups={}, dimensions={1}",
     "gathering dimension 1 of f32[4,8]{1,0} over 4 participants gives 32, not 8"),
    ("ROOT x = (s32[4,16], f32[4,8]) all-gather(p, f), replica_groups={{0},{1},{2},{3}}, "
     "dimensions={1}", "over 2 participants gives 16, not 8"),
    ("ROOT x = (s32[4,32], s32[4,32]) all-gather(p, f), replica_groups={}, dimensions={1}",
     "shape s32[4,32]{1,0} does not fit operand f32[4,8]"),
    ("ROOT x = (s32[4,32]) all-gather(p, f), replica_groups={}, dimensions={1}",
     "has no result per operand (2 operands)"),
    ("ROOT x = (s32[4,4], s32[4,8]) reduce-scatter(p, p), replica_groups={{0,1},{2,3}}, "
     "dimensions={1}, to_apply=add", "does not give 8"),
]


def module(body: str):
    return parse_module(HEAD + body + "\n}\n")


VALID = [
    "ROOT x = s32[4,8] add(p, p)",
    "c = c64[4,8] complex(f, f)\n  ROOT x = f32[4,8] abs(c)",  # abs of a complex is real
    "c = c128[4] parameter(4)\n  ROOT x = f64[4] abs(c)",
    "ROOT x = pred[4,8] compare(p, p), direction=LT",
    "ROOT x = f32[4,8] convert(p)",
    "ROOT x = s32[32] reshape(p)",
    "ROOT x = s32[2,4,8] broadcast(p), dimensions={1,2}",
    "ROOT x = s32[2,3] slice(p), slice={[0:4:2], [1:8:3]}",
    "ROOT x = s32[8,8] concatenate(p, p), dimensions={0}",
    "ROOT x = s32[8,4] transpose(p), dimensions={1,0}",
    "ROOT x = s32[8] reduce(p, s), dimensions={0}, to_apply=add",
    "ROOT x = s32[] all-reduce(s), replica_groups={{0,1},{2,3}}, to_apply=add",
    # XLA's verifier lets all-reduce alone have groups of different sizes
    "ROOT x = s32[] all-reduce(s), replica_groups={{0,1,2},{3}}, to_apply=add",
    "ROOT x = s32[16,8] all-gather(p), replica_groups={}, dimensions={0}",
    "ROOT x = s32[4,4] reduce-scatter(p), replica_groups={{0,1},{2,3}}, dimensions={1}, to_apply=add",
] + TUPLE_COLLECTIVES_VALID + [
    "ROOT x = f32[4,8] get-tuple-element(t), index=1",
    "ROOT x = s32[3,5] iota(), iota_dimension=1",
    "ROOT x = u32[] replica-id()",
    "y = pred[4,8] compare(p, p), direction=EQ\n  ROOT x = s32[4,8] select(y, p, p)",
    "ROOT x = s32[4,8] clamp(s, p, s)",
    "ROOT x = pred[4,8] is-finite(f)",
    "c = c64[4,8] complex(f, f)\n  ROOT x = f32[4,8] real(c)",  # the component type
    "c = c128[4] parameter(4)\n  ROOT x = f64[4] imag(c)",
    "ROOT x = f32[4,8] imag(f)",  # of a float: the same type (XLA's shape inference)
    # bitcast-convert between widths (XLA's InferBitcastConvertShape; jax.random's rbg keys)
    "ROOT x = f32[4,8] bitcast-convert(p)",
    "ROOT x = u8[4,8,4] bitcast-convert(p)",
    "ROOT x = u16[4,8,2] bitcast-convert(f)",
    "y = s16[4,8,2] bitcast-convert(p)\n  ROOT x = f32[4,8] bitcast-convert(y)",
    "ROOT x = s8[4] bitcast-convert(s)",
    "v = f32[8] parameter(4)\n  ROOT x = (f32[4,8], f32[8], f32[8]) "
    "batch-norm-training(f, v, v), epsilon=0.001, feature_index=1",
    "v = f32[4] parameter(4)\n  ROOT x = f32[4,8] batch-norm-inference(f, v, v, v, v), "
    "epsilon=0.001, feature_index=0",
    "v = f32[8] parameter(4)\n  ROOT x = (f32[4,8], f32[8], f32[8]) "
    "batch-norm-grad(f, v, v, v, f), epsilon=0.001, feature_index=1",
]

INVALID = [
    ("ROOT x = s32[4,8] add(p, f)", "e/x (add): operand types differ"),
    ("ROOT x = s32[8,4] add(p, p)", "result and operands"),
    ("ROOT x = s32[4,8] compare(p, p), direction=LT", "compare must produce pred"),
    ("ROOT x = f32[4,8] reshape(p)", "reshape changes the element type"),
    ("ROOT x = s32[2,4,8] broadcast(p), dimensions={0,1}", "does not match result dimension"),
    ("ROOT x = s32[2,4] slice(p), slice={[0:4:2], [1:8:3]}", "expected s32[2,3]"),
    ("ROOT x = s32[2,8] slice(p), slice={[0:9], [0:8]}", "does not fit dimension 0"),
    ("ROOT x = s32[8,9] concatenate(p, p), dimensions={0}", "expected s32[8,8]"),
    ("ROOT x = s32[8,4] transpose(p), dimensions={1,1}", "not a permutation"),
    ("ROOT x = s32[4] reduce(p, s), dimensions={0}, to_apply=add", "expected s32[8]"),
    ("ROOT x = s32[8] reduce(p, p), dimensions={0}, to_apply=add", "must be a scalar"),
    ("ROOT x = s32[16,8] all-gather(p), replica_groups={{0,1,2,3},{4}}, dimensions={0}",
     "different sizes"),
    ("ROOT x = s32[] all-reduce(s), replica_groups={{0,1},{1,2}}, to_apply=add",
     "more than one group"),
    ("ROOT x = s32[] all-reduce(s), use_global_device_ids=true, to_apply=add", "needs a channel_id"),
    ("ROOT x = s32[8,8] all-gather(p), replica_groups={}, dimensions={0}",
     "make 2 shards along dimension 0, the groups have 4 members"),
    ("ROOT x = s32[4,2] reduce-scatter(p), replica_groups={{0,1},{2,3}}, dimensions={1}, "
     "to_apply=add", "make 4 shards along dimension 1, the groups have 2 members"),
] + TUPLE_COLLECTIVES_INVALID + [
    ("ROOT x = s32[4,8] get-tuple-element(t), index=1", "expected f32[4,8]"),
    ("ROOT x = f32[4,8] get-tuple-element(t), index=2", "index 2 is not an element"),
    ("ROOT x = s32[3,5] iota(), iota_dimension=2", "iota_dimension 2 does not fit"),
    ("ROOT x = s32[] replica-id()", "expected u32[]"),
    ("ROOT x = s32[4,8] select(p, p, p)", "the first operand must be pred"),
    ("c = c64[4,8] complex(f, f)\n  ROOT x = c64[4,8] abs(c)", "differs from operand c64"),
    ("ROOT x = s32[4,8] abs(f)", "differs from operand f32"),
    ("ROOT x = f32[4,8] is-finite(f)", "should have element type pred for operand f32[4,8]"),
    ("ROOT x = pred[4,8] is-finite(p)", "operand s32[4,8]{1,0} is not a float"),
    ("c = c64[4,8] complex(f, f)\n  ROOT x = f64[4,8] real(c)", "should have element type f32"),
    ("c = c128[4] parameter(4)\n  ROOT x = c128[4] imag(c)", "should have element type f64"),
    ("ROOT x = s32[4,8] real(p)", "is not a float or complex"),
    ("ROOT x = u8[4,8] bitcast-convert(p)", "has dims [4, 8, 4], result is u8[4,8]"),
    ("ROOT x = u64[4] bitcast-convert(p)", "operand's last dimension must be 2"),
    ("ROOT x = u64[] bitcast-convert(s)", "operand's last dimension must be 2"),
    ("v = f32[8] parameter(4)\n  ROOT x = (f32[4,8], f32[8], f32[8]) "
     "batch-norm-training(f, v, v), epsilon=0.001, feature_index=2",
     "feature_index=2 is outside the operand's rank 2"),
    ("v = f32[4] parameter(4)\n  ROOT x = (f32[4,8], f32[4], f32[4]) "
     "batch-norm-training(f, v, v), epsilon=0.001, feature_index=1",
     "operand 1 is f32[4]{0}, expected f32[8]"),
    ("v = s32[8] parameter(4)\n  ROOT x = (s32[4,8], s32[8], s32[8]) "
     "batch-norm-training(p, v, v), epsilon=0.001, feature_index=1",
     "is not a floating-point array"),
    ("v = f32[8] parameter(4)\n  ROOT x = f32[4,8] batch-norm-training(f, v, v), "
     "epsilon=0.001, feature_index=1", "expected (f32[4,8]"),
    ("v = f32[8] parameter(4)\n  ROOT x = f32[4,8] batch-norm-inference(f, v, v, v, v), "
     "feature_index=1", "needs the attributes epsilon"),
    ("v = f32[8] parameter(4)\n  ROOT x = (f32[4,8], f32[8], f32[8]) "
     "batch-norm-grad(f, v, v, v, p), epsilon=0.001, feature_index=1", "grad_output s32[4,8]"),
]


@pytest.mark.parametrize("body", VALID)
def test_valid(body: str) -> None:
    verify_module(module(body))


@pytest.mark.parametrize("body,fragment", INVALID)
def test_invalid(body: str, fragment: str) -> None:
    with pytest.raises(VerifyError) as info:
        verify_module(module(body))
    assert fragment in str(info.value)
    assert str(info.value).startswith("e/x (")


def test_reducer_arity_and_types() -> None:
    m = parse_module("""HloModule r
bad {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  ROOT x = s32[] reduce(p, z), dimensions={0}, to_apply=bad
}
""")
    with pytest.raises(VerifyError, match="reducer bad parameter 0 is f32"):
        verify_module(m)


def test_structure_broken_by_hand() -> None:
    m = module("ROOT x = s32[4,8] add(p, p)")
    x = m.entry.root
    x.operands[0].users.clear()
    with pytest.raises(VerifyError, match="missing from the users of its operand p"):
        verify_module(m)


def test_constant_without_value() -> None:
    from tilecc.hlo.ir import HloInstruction
    from tilecc.hlo.opcodes import HloOpcode
    from tilecc.hlo.types import PrimitiveType, Shape
    m = module("ROOT x = s32[4,8] add(p, p)")
    m.entry.add_instruction(HloInstruction.create(HloOpcode.CONSTANT,
                                                  Shape.array(PrimitiveType.S32, ())), "empty")
    with pytest.raises(VerifyError, match="e/empty \\(constant\\): constant has no value"):
        verify_module(m)
