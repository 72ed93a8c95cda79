"""PrimitiveType numbering and predicates, shapes, layouts, replica groups, literals."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilecc.hlo.literal import LiteralError, format_literal, parse_literal
from tilecc.hlo.replica_groups import ReplicaGroups
from tilecc.hlo.types import (Layout, PrimitiveType, Shape, compatible, is_floating, is_integral,
                              is_unsigned, numpy_dtype, parse_primitive_type, primitive_type_name)

T = PrimitiveType


def test_xla_numbering() -> None:
    assert (T.PRED, T.S32, T.U32, T.F32, T.TUPLE, T.BF16, T.TOKEN, T.F8E8M0FNU) == \
        (1, 4, 8, 11, 13, 16, 17, 31)


def test_spec_000_type_mask_selects_s32_and_u32_only() -> None:
    selected = {t for t in T if is_integral(t) and ((t - 4) & ~4) == 0}
    assert selected == {T.S32, T.U32}


def test_predicates() -> None:
    assert is_integral(T.PRED) and is_integral(T.S4) and is_integral(T.U64)
    assert not is_integral(T.F32) and not is_integral(T.BF16)
    assert is_unsigned(T.U8) and not is_unsigned(T.PRED) and not is_unsigned(T.S8)
    assert is_floating(T.BF16) and is_floating(T.F8E4M3FN) and not is_floating(T.C64)


def test_names_and_dtypes() -> None:
    for t in T:
        if t in (T.PRIMITIVE_TYPE_INVALID, T.TUPLE):
            continue
        assert parse_primitive_type(primitive_type_name(t)) == t
    assert primitive_type_name(T.OPAQUE_TYPE) == "opaque"
    assert numpy_dtype(T.S32) == np.int32 and numpy_dtype(T.PRED) == np.bool_
    assert numpy_dtype(T.BF16) == ml_dtypes.bfloat16
    assert numpy_dtype(T.F8E4M3FN) == ml_dtypes.float8_e4m3fn
    with pytest.raises(ValueError):
        numpy_dtype(T.TOKEN)


def test_shape_text_and_counts() -> None:
    s = Shape.array(T.S32, (256, 64))
    assert s.to_text() == "s32[256,64]{1,0}" and s.rank == 2 and s.element_count() == 16384
    assert Shape.array(T.S32, ()).to_text() == "s32[]"
    assert Shape.array(T.F32, (1, 1, 1)).true_num_dimensions() == 0
    assert Shape.array(T.F32, (1, 5, 1, 3)).true_num_dimensions() == 2
    assert Shape.array(T.F32, (4, 0)).element_count() == 0
    t = Shape.tuple([s, Shape.token()])
    assert t.is_tuple and not t.is_array and t.to_text() == "(s32[256,64]{1,0}, token[])"
    dyn = Shape.array(T.S8, (4, 2), dynamic_dims=(True, False))
    assert dyn.to_text() == "s8[<=4,2]{1,0}"
    assert Layout((0, 1), "T(8,128)").to_text() == "{0,1:T(8,128)}"
    long = Shape.tuple([Shape.array(T.S32, ())] * 11)
    assert long.to_text() == ("(s32[], s32[], s32[], s32[], s32[], /*index=5*/s32[], s32[], "
                              "s32[], s32[], s32[], /*index=10*/s32[])")


def test_compatible_ignores_layout_only() -> None:
    a = Shape.array(T.S32, (2, 3))
    b = Shape.array(T.S32, (2, 3), Layout((0, 1)))
    assert compatible(a, b) and a != b
    assert not compatible(a, Shape.array(T.U32, (2, 3)))
    assert not compatible(a, Shape.array(T.S32, (3, 2)))
    assert compatible(Shape.tuple([a]), Shape.tuple([b]))
    assert not compatible(Shape.tuple([a]), Shape.tuple([a, a]))


def test_replica_groups_forms() -> None:
    iota = ReplicaGroups.iota(4, 2, (2, 2, 2), (2, 1, 0))
    assert iota.groups() == [[0, 4], [2, 6], [1, 5], [3, 7]]
    assert iota.to_text() == "[4,2]<=[2,2,2]T(2,1,0)" and iota.first_group_size() == 2
    assert ReplicaGroups.iota(2, 2, (4,)).groups() == [[0, 1], [2, 3]]
    assert ReplicaGroups.iota(2, 2, (2, 2), (1, 0)).groups() == [[0, 2], [1, 3]]
    mesh = ReplicaGroups.mesh([("axis_0", 2), ("axis_1", 2), ("axis_2", 1)], ["axis_0"])
    assert mesh.groups() == [[0, 2], [1, 3]]
    stage = ReplicaGroups.mesh([("stage", 2), ("local", 4)], ["local"])
    assert stage.groups() == [[0, 1, 2, 3], [4, 5, 6, 7]] and stage.first_group_size() == 4
    both = ReplicaGroups.mesh([("a", 2), ("b", 3)], ["b", "a"])
    assert both.groups() == [[0, 3, 1, 4, 2, 5]]
    # device_ids: the device at each row-major mesh position (XLA's Mesh device assignment);
    # [2,4]T(1,0) orders the 8 devices 0,4,1,5,2,6,3,7 over the [4,1,2] mesh
    ordered = ReplicaGroups.mesh([("axis_0", 4), ("axis_1", 1), ("axis_2", 2)], ["axis_0"],
                                 "[2,4]T(1,0)")
    assert ordered.groups() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert ordered.to_text() == ("mesh['axis_0'=4,'axis_1'=1,'axis_2'=2], "
                                 "device_ids=([2,4]T(1,0)) {'axis_0'}")
    across = ReplicaGroups.mesh([("a", 4), ("b", 2)], ["b"], "[2,4]T(1,0)")
    assert across.groups() == [[0, 4], [1, 5], [2, 6], [3, 7]]
    listed = ReplicaGroups.mesh([("a", 2), ("b", 2)], ["a"], "3,1,2,0")
    assert listed.groups() == [[3, 2], [1, 0]]
    for bad in ("0,1,2", "[4]T(1,0)", "0,1,1,2", "[2,2]x"):
        with pytest.raises(ValueError):
            ReplicaGroups.mesh([("a", 2), ("b", 2)], ["a"], bad)
    assert ReplicaGroups.empty().groups() is None and ReplicaGroups.empty().to_text() == "{}"
    assert ReplicaGroups.empty().first_group_size() is None
    explicit = ReplicaGroups.from_groups([[0, 1], [2, 3]])
    assert explicit.to_text() == "{{0,1},{2,3}}" and explicit.num_groups() == 2
    with pytest.raises(ValueError):
        ReplicaGroups.iota(2, 2, (3,))
    with pytest.raises(ValueError):
        ReplicaGroups.mesh([("a", 2)], ["b"])


@pytest.mark.parametrize("text,shape,expected", [
    ("-7", Shape.array(T.S8, ()), np.int8(-7)),
    ("{1, 2, 3}", Shape.array(T.U16, (3,)), np.array([1, 2, 3], np.uint16)),
    ("{ { 1, 0 }, { 0, 1 } }", Shape.array(T.PRED, (2, 2)), np.eye(2, dtype=bool)),
    ("{ {}, {} }", Shape.array(T.S32, (2, 0)), np.zeros((2, 0), np.int32)),
    ("(1, -2.5)", Shape.array(T.C64, ()), np.complex64(1 - 2.5j)),
    ("255", Shape.array(T.U8, ()), np.uint8(255)),
])
def test_parse_literal(text: str, shape: Shape, expected: np.ndarray) -> None:
    got = parse_literal(text, shape)
    assert got.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("text,shape,fragment", [
    ("256", Shape.array(T.U8, ()), "out of range for u8"),
    ("-1", Shape.array(T.U32, ()), "out of range"),
    ("1.5", Shape.array(T.S32, ()), "expected an integer"),
    ("{1, 2}", Shape.array(T.S32, (2, 1)), "expected '{' for dimension 1"),
    ("{1, 2} 3", Shape.array(T.S32, (2,)), "unexpected '3'"),
    ("maybe", Shape.array(T.PRED, ()), "expected true or false"),
])
def test_bad_literals(text: str, shape: Shape, fragment: str) -> None:
    with pytest.raises(LiteralError) as info:
        parse_literal(text, shape)
    assert fragment in info.value.message


def test_format_literal_like_xla() -> None:
    f32 = Shape.array(T.F32, (3,))
    assert format_literal(np.array([1.5, 0.1, 0.1234567], np.float32), f32) == \
        "{1.5, 0.1, 0.123456702}"
    bf = Shape.array(T.BF16, (2, 2))
    assert format_literal(np.array([[1.5, 0.1], [3, 4]], ml_dtypes.bfloat16), bf) == \
        "{ { 1.5, 0.1001 }, { 3, 4 } }"
    assert format_literal(np.array([True, False]), Shape.array(T.PRED, (2,))) == "{1, 0}"
    assert format_literal(np.float32("nan"), Shape.array(T.F32, ())) == "nan"
    assert format_literal(np.int32(-2**31), Shape.array(T.S32, ())) == "-2147483648"
    for value in (np.float32(3.4028235e38), np.float32(1e-45), np.float32(-0.3)):
        text = format_literal(value, Shape.array(T.F32, ()))
        assert np.float32(text) == value


def test_big_literals_take_the_bulk_path_with_the_same_results() -> None:
    rng = np.random.default_rng(7)
    for t, arr in [(T.S32, rng.integers(-2**31, 2**31 - 1, (30, 40), dtype=np.int32)),
                   (T.U64, rng.integers(0, 2**64 - 1, (100,), dtype=np.uint64)),
                   (T.F32, rng.standard_normal((50, 20)).astype(np.float32))]:
        shape = Shape.array(t, arr.shape)
        got = parse_literal(format_literal(arr, shape), shape)
        assert got.dtype == arr.dtype
        np.testing.assert_array_equal(got, arr)
    big = Shape.array(T.S8, (100,))
    with pytest.raises(LiteralError, match="value 300 out of range for s8") as info:
        parse_literal("{" + ",".join(["1"] * 99 + ["300"]) + "}", big)
    assert info.value.offset == 199
    with pytest.raises(LiteralError, match="dimension 0 has 99 elements"):
        parse_literal("{" + ",".join(["1"] * 99) + "}", big)


def test_elided_constant_has_no_value() -> None:
    from tilecc.errors import VerifyError
    from tilecc.hlo.parser import parse_module
    m = parse_module("HloModule e\nENTRY e {\n  ROOT c = f32[1000] constant({...})\n}\n")
    with pytest.raises(VerifyError, match="constant c: no value"):
        _ = m.entry.root.literal
