"""The ALU table on real values: corners of float32, integer extremes, raw bits."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.bir.enums import AluOpType
from tilecc.errors import SimError
from tilecc.klr.ast import AluOp as KlrAluOp
from tilecc.sim.alu import ALU_TABLE, alu_entry, apply_alu, fold_rows, reduce_alu

F = np.float32
NAN, INF = F(np.nan), F(np.inf)
I32 = np.iinfo(np.int32)


def run(op: str, x, y):
    return apply_alu(alu_entry(AluOpType[op]), np.asarray(x), np.asarray(y))


def test_every_alu_op_type_has_an_entry():
    assert set(ALU_TABLE) == {m.name for m in AluOpType}


def test_entry_of_another_int_enum_is_by_name_not_by_value():
    # KLR numbers its AluOp otherwise: add is 1 there, bitwise_not in BIR
    assert KlrAluOp.add == AluOpType.bitwise_not
    assert alu_entry(KlrAluOp.add).name == "add"
    assert alu_entry(AluOpType.add).name == "add" and alu_entry("max").name == "max"


def test_unknown_op_names_itself():
    with pytest.raises(SimError, match="'frobnicate'"):
        alu_entry("frobnicate")


@pytest.mark.parametrize("op, x, y, want", [
    ("add", [1.5, -2.0, INF, INF], [2.25, 2.0, -INF, 1.0], [3.75, 0.0, NAN, INF]),
    ("subtract", [1.0, -0.0, 5.0], [3.0, 0.0, INF], [-2.0, -0.0, -INF]),
    ("mult", [-3.0, 0.0, 1e30], [2.0, INF, 1e30], [-6.0, NAN, INF]),
    ("divide", [1.0, -1.0, 0.0, 7.0], [0.0, 0.0, 0.0, 2.0], [INF, -INF, NAN, 3.5]),
    ("max", [1.0, NAN, -INF], [2.0, 0.0, -5.0], [2.0, NAN, -5.0]),
    ("min", [1.0, 3.0, NAN], [2.0, -INF, 0.0], [1.0, -INF, NAN]),
    ("is_equal", [1.0, NAN, 0.0], [1.0, NAN, -0.0], [1.0, 0.0, 1.0]),
    ("not_equal", [1.0, NAN, 2.0], [1.0, NAN, 3.0], [0.0, 1.0, 1.0]),
    ("is_gt", [2.0, 1.0, NAN], [1.0, 1.0, 0.0], [1.0, 0.0, 0.0]),
    ("is_ge", [2.0, 1.0, -INF], [1.0, 1.0, -INF], [1.0, 1.0, 1.0]),
    ("is_lt", [-1.0, 1.0], [0.0, 1.0], [1.0, 0.0]),
    ("is_le", [-1.0, 1.0, 2.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0]),
    ("logical_and", [1.0, 0.0, NAN, -2.0], [3.0, 1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]),
    ("logical_or", [0.0, 0.0, -0.0], [0.0, 5.0, 0.0], [0.0, 1.0, 0.0]),
    ("logical_xor", [1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
    ("average", [1.0, -3.0], [2.0, 3.0], [1.5, 0.0]),
    ("pow", [2.0, -8.0, 4.0], [10.0, 1.0 / 3.0, 0.5], [1024.0, NAN, 2.0]),
    ("mod", [7.0, -7.0, 7.5, 1.0], [3.0, 3.0, -2.0, 0.0], [1.0, -1.0, 1.5, NAN]),
    ("rsqrt", [4.0, 0.0, -1.0], [9.0, 9.0, 9.0], [0.5, INF, NAN]),
    ("abs", [-2.5, -0.0, -INF], [1.0, 1.0, 1.0], [2.5, 0.0, INF]),
    ("bypass", [-2.5, NAN], [1.0, 1.0], [-2.5, NAN]),
    ("abs_max", [-3.0, 1.0], [2.0, -4.0], [3.0, 4.0]),
    ("abs_min", [-3.0, 1.0], [2.0, -4.0], [2.0, 1.0]),
    ("elemwise_mul", [3.0], [-2.0], [-6.0]),
])
def test_arithmetic_ops_in_float32(op, x, y, want):
    got = run(op, np.array(x, F), np.array(y, F))
    assert got.dtype == F
    np.testing.assert_array_equal(got, np.array(want, F))


def test_arithmetic_on_integers_goes_through_float32():
    # 2**24 + 1 is not a float32: the sum rounds, as on the engine
    got = run("add", np.array([2 ** 24 + 1, -5], np.int32), np.array([0, 2], np.int32))
    np.testing.assert_array_equal(got, np.array([2 ** 24, -3], F))


@pytest.mark.parametrize("op, x, y, want", [
    ("bitwise_and", [I32.min, -1, 0x0F0F], [-1, 0x7FFFFFFF, 0x00FF], [I32.min, I32.max, 0x000F]),
    ("bitwise_or", [I32.min, 1], [1, 2], [I32.min + 1, 3]),
    ("bitwise_xor", [-1, 5], [I32.max, 5], [I32.min, 0]),
    ("bitwise_not", [0, -1, I32.min], [9, 9, 9], [-1, 0, I32.max]),
    ("arith_shift_left", [1, 3, -1, 1], [31, 1, 4, 32], [I32.min, 6, -16, 0]),
    ("logical_shift_left", [1, 0x40000000], [0, 1], [1, I32.min]),
    ("arith_shift_right", [-8, -1, I32.min, 8, -8], [1, 5, 31, 40, 40], [-4, -1, -1, 0, -1]),
    ("logical_shift_right", [-8, I32.min, 8, -1], [1, 31, 2, 32], [0x7FFFFFFC, 1, 2, 0]),
    ("mod_int", [7, -7, 5], [3, 3, 0], [1, -1, 0]),
])
def test_bitvec_ops_on_int32_bits(op, x, y, want):
    got = run(op, np.array(x, np.int32), np.array(y, np.int32))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.array(want, np.int32))


def test_bitvec_ops_on_uint32_and_float_immediates():
    x = np.array([0xFFFFFFFF, 0x80000000, 0x12345678], np.uint32)
    np.testing.assert_array_equal(run("bitwise_and", x, np.float32(255.0)),
                                  np.array([255, 0, 0x78], np.uint32))
    # arithmetic right shift sign-fills the raw bits even of an unsigned tile
    np.testing.assert_array_equal(run("arith_shift_right", x, np.float32(4.0)),
                                  np.array([0xFFFFFFFF, 0xF8000000, 0x01234567], np.uint32))
    np.testing.assert_array_equal(run("logical_shift_right", x, np.float32(4.0)),
                                  np.array([0x0FFFFFFF, 0x08000000, 0x01234567], np.uint32))


def test_bitvec_reverse_takes_integer_type_from_the_tile():
    # reverse: the immediate is on the data port, the tile on the other
    got = run("arith_shift_left", np.float32(1.0), np.array([0, 4, 31], np.int32))
    np.testing.assert_array_equal(got, np.array([1, 16, I32.min], np.int32))


def test_bitvec_on_float_data_is_an_error():
    with pytest.raises(SimError, match="bitwise_and needs integer data"):
        run("bitwise_and", np.array([1.0], F), np.float32(1.0))
    with pytest.raises(SimError, match="non-finite"):
        run("bitwise_or", np.array([1], np.int32), np.float32(np.nan))


def test_reduce_folds_in_order_and_by_kind():
    data = np.array([[8.0, 2.0, 1.0], [1.0, -1.0, NAN]], F)
    np.testing.assert_array_equal(reduce_alu(ALU_TABLE["subtract"], data, (1,)), [5.0, NAN])
    np.testing.assert_array_equal(reduce_alu(ALU_TABLE["max"], data, (1,)), [8.0, NAN])
    np.testing.assert_array_equal(reduce_alu(ALU_TABLE["average"], data[:1], (1,)),
                                  np.array([11.0 / 3.0], F))
    ints = np.array([[1, 2, 4], [I32.min, 0, 1]], np.int32)
    np.testing.assert_array_equal(reduce_alu(ALU_TABLE["bitwise_or"], ints, (1,)),
                                  np.array([7, I32.min + 1], np.int32))
    np.testing.assert_array_equal(reduce_alu(ALU_TABLE["abs_max"], np.array([[-7.0, 3.0]], F), (1,)), [7.0])
    with pytest.raises(SimError, match="divide is not a reduction op"):
        reduce_alu(ALU_TABLE["divide"], data, (1,))


def test_reduce_over_every_axis_is_a_0d_array():
    data = np.array([[8.0, -2.0], [1.0, 5.0]], F)
    for name, want in (("add", 12.0), ("average", 3.0), ("max", 8.0), ("abs_max", 8.0)):
        out = reduce_alu(ALU_TABLE[name], data, (0, 1))
        assert type(out) is np.ndarray and out.shape == () and out.dtype == F, name
        assert out == want, name
    ints = np.array([[1, 2], [4, -8]], np.int32)
    out = reduce_alu(ALU_TABLE["bitwise_or"], ints, (0, 1))
    assert type(out) is np.ndarray and out.dtype == np.int32 and out == -1


def test_fold_rows_starts_from_the_register():
    rows = np.array([[1.0, 2.0], [3.0, 4.0]], F)
    start = np.array([10.0, -1.0], F)
    np.testing.assert_array_equal(fold_rows(ALU_TABLE["add"], start, rows), [13.0, 6.0])
    np.testing.assert_array_equal(fold_rows(ALU_TABLE["subtract"], start, rows), [7.0, -8.0])
    np.testing.assert_array_equal(fold_rows(ALU_TABLE["min"], start, rows), [1.0, -1.0])
    np.testing.assert_array_equal(fold_rows(ALU_TABLE["logical_or"], np.zeros(2, F), rows * 0), [0.0, 0.0])


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_fold_of_one_or_two_elements_orders_signed_zeros(name):
    """One element per fold is that element bit for bit (-0.0, +0.0, NaN); two zeros of
    either sign fold to +0 for max and -0 for min, in either order."""
    one = np.array([[-0.0], [0.0], [NAN], [-3.0]], F)
    got = reduce_alu(ALU_TABLE[name], one, (1,))
    np.testing.assert_array_equal(got.view(np.uint32), one[:, 0].view(np.uint32))
    two = np.array([[-0.0, 0.0], [0.0, -0.0]], F)
    got = reduce_alu(ALU_TABLE[name], two, (1,))
    assert (np.signbit(got) == (name == "min")).all() and (got == 0).all()
