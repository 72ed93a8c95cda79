"""The KLR reference interpreter on its own: semantics on real values, accesses, errors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.klr import ast as k
from tilecc.klr.interp import interpret_kernel
from tilecc.klr.interp_alu import ACT, ALU, alu, to_dtype

A = k.AluOp
F32, I32 = k.Dtype.float32, k.Dtype.int32


def kernel_of(body, inputs, outputs):
    return k.Kernel("t", inputs, outputs, body)


def hbm(name, dtype, shape):
    return k.make_tensor(name, dtype, shape, k.Memory.hbm)


def sb(name, dtype, shape):
    return k.make_tensor(name, dtype, shape, k.Memory.sbuf)


def test_tables_cover_the_klr_enums():
    assert set(ALU) == set(A)
    assert set(ACT) == set(k.ActivationFunc)
    assert {op for op, (bitwise, _, _) in ALU.items() if bitwise} == k.BITWISE_ALU_OPS


@pytest.mark.parametrize("op, x, y, want", [
    (A.subtract, [1.0, np.inf], [3.0, np.inf], [-2.0, np.nan]),
    (A.max, [-0.0, 0.0, np.nan], [0.0, -0.0, 1.0], [0.0, 0.0, np.nan]),
    (A.min, [-0.0, 0.0], [0.0, -0.0], [-0.0, -0.0]),
    (A.is_le, [1.0, np.nan], [1.0, 1.0], [1.0, 0.0]),
    (A.mod, [-7.0, 7.0], [3.0, -3.0], [-1.0, 1.0]),
    (A.average, [1.0], [4.0], [2.5]),
])
def test_arithmetic(op, x, y, want):
    got = alu(op, np.array(x, np.float32), np.array(y, np.float32))
    np.testing.assert_array_equal(got, np.array(want, np.float32))
    number = ~np.isnan(got)
    assert np.array_equal(np.signbit(got[number]), np.signbit(np.array(want, np.float32)[number]))


def test_bitwise_on_raw_bits():
    x = np.array([-8, np.iinfo(np.int32).min, 1], np.int32)
    np.testing.assert_array_equal(alu(A.arith_shift_right, x, np.int32(1)), [-4, -(2 ** 30), 0])
    np.testing.assert_array_equal(alu(A.logical_shift_right, x, np.int32(28)), [15, 8, 0])
    np.testing.assert_array_equal(alu(A.logical_shift_left, x, np.float32(33.0)), [0, 0, 0])
    np.testing.assert_array_equal(alu(A.bitwise_not, x, np.int32(0)), [7, np.iinfo(np.int32).max, -2])
    with pytest.raises(InterpError, match="bitwise op bitwise_or on non-integer data"):
        alu(A.bitwise_or, np.ones(2, np.float32), np.float32(1))


def test_conversion_on_write():
    vals = np.array([1.5, 2.5, -2.5, np.nan, 3e9, -3e9, np.inf], np.float32)
    np.testing.assert_array_equal(to_dtype(vals, np.dtype(np.int32)),
                                  [2, 2, -2, 0, 2 ** 31 - 1, -(2 ** 31), 2 ** 31 - 1])
    np.testing.assert_array_equal(to_dtype(vals[:3], np.dtype(np.uint8)), [2, 2, 0])
    bf = to_dtype(np.array([1.00390625, 1.01171875], np.float32), np.dtype(ml_dtypes.bfloat16))
    np.testing.assert_array_equal(bf.astype(np.float32), [1.0, 1.015625])  # ties to even
    np.testing.assert_array_equal(to_dtype(np.array([-1], np.int32), np.dtype(np.uint32)), [2 ** 32 - 1])


def test_patterns_broadcast_reverse_and_windows():
    a = hbm("a", F32, (4, 8))
    out = hbm("out", F32, (4, 4))
    t = sb("t", F32, (4, 8))
    u = sb("u", F32, (4, 4))
    rev = k.AccessPattern(t, 2, (k.APPair(-2, 4),), 2, 7)  # partitions 2..3, columns 7, 5, 3, 1
    window = k.AccessPattern(u, 2, (k.APPair(1, 4),), 2, 0)
    body = [k.NcDmaCopy(t, a), k.MemSet(u, k.Immediate(0.0), F32),
            k.TensorScalar(window, rev, k.Immediate(10.0), A.add),
            k.NcDmaCopy(out, u)]
    value = np.arange(32, dtype=np.float32).reshape(4, 8)
    got = interpret_kernel(kernel_of(body, [a], [out]), {"a": value})["out"]
    np.testing.assert_array_equal(got[:2], 0.0)
    np.testing.assert_array_equal(got[2:], value[2:, 7::-2] + 10)


def test_basic_access_with_coordinates_and_slices():
    a = hbm("a", F32, (4, 6))
    out = hbm("out", F32, (2, 3))
    t = sb("t", F32, (4, 6))
    u = sb("u", F32, (2, 3))
    pick = k.AccessBasic(t, (k.Slice(1, 3), k.Slice(0, 6, 2)))
    body = [k.NcDmaCopy(t, a), k.NcCopy(u, pick), k.NcDmaCopy(out, u)]
    value = np.arange(24, dtype=np.float32).reshape(4, 6)
    got = interpret_kernel(kernel_of(body, [a], [out]), {"a": value})["out"]
    np.testing.assert_array_equal(got, value[1:3, 0:6:2])


def test_accumulators_carry_between_statements():
    a = hbm("a", F32, (2, 3))
    out = hbm("out", F32, (2, 1))
    t, y, r = sb("t", F32, (2, 3)), sb("y", F32, (2, 3)), sb("r", F32, (2, 1))
    body = [k.NcDmaCopy(t, a),
            k.Exponential(y, t, k.Immediate(0.0), None, k.AccumCmd.ZeroAccumulate, k.Immediate(0.0)),
            k.Exponential(y, t, k.Immediate(0.0), r, k.AccumCmd.Accumulate, k.Immediate(0.0)),
            k.NcDmaCopy(out, r)]
    value = np.array([[0.0, 1.0, 2.0], [-1.0, 0.0, 1.0]], np.float32)
    got = interpret_kernel(kernel_of(body, [a], [out]), {"a": value})["out"]
    np.testing.assert_allclose(got[:, 0], 2 * np.exp(value.astype(np.float64)).sum(axis=1), rtol=1e-6)


def test_errors_name_the_statement():
    a = hbm("a", F32, (4, 4))
    out = hbm("out", F32, (4, 4))
    t = sb("t", F32, (4, 4))
    beyond = k.AccessPattern(t, 4, (k.APPair(1, 4),), 0, 2)
    kern = kernel_of([k.NcDmaCopy(t, a), k.TensorScalar(beyond, t, k.Immediate(1.0), A.add)], [a], [out])
    with pytest.raises(InterpError, match=r"body\[1\] \(TensorScalar\): access to 't' reaches free elements 2\.\.5; it has 4"):
        interpret_kernel(kern, {"a": np.zeros((4, 4), np.float32)})
    with pytest.raises(InterpError, match="missing input 'a'"):
        interpret_kernel(kern, {})
    with pytest.raises(InterpError, match=r"input 'a' is int32\[4, 4\]; the kernel expects float32\[4, 4\]"):
        interpret_kernel(kern, {"a": np.zeros((4, 4), np.int32)})
    with pytest.raises(InterpError, match="unknown input 'b'"):
        interpret_kernel(kern, {"a": np.zeros((4, 4), np.float32), "b": np.zeros(1)})
    col = sb("col", F32, (4, 1))
    tsr = kernel_of([k.NcDmaCopy(t, a), k.TensorScalarReduce(t, t, k.Immediate(1.0), A.add, False, None,
                                                             A.add, col, k.AccumCmd.Accumulate)], [a], [])
    with pytest.raises(InterpError, match=r"body\[1\] \(TensorScalarReduce\): .*ZeroAccumulate"):
        interpret_kernel(tsr, {"a": np.zeros((4, 4), np.float32)})


def test_activation_load_accumulate_adds_like_accumulate():
    a = hbm("a", F32, (2, 2))
    out = hbm("out", F32, (2, 1))
    t, y, r = sb("t", F32, (2, 2)), sb("y", F32, (2, 2)), sb("r", F32, (2, 1))
    Cmd = k.AccumCmd
    body = [k.NcDmaCopy(t, a)]
    for cmd in (Cmd.ZeroAccumulate, Cmd.LoadAccumulate, Cmd.Accumulate):
        body.append(k.NcActivate(y, t, cmd, k.ActivationFunc.copy, k.Immediate(1.0), None, A.add, r))
    body.append(k.NcDmaCopy(out, r))
    value = np.array([[1.0, 2.0], [3.0, -4.0]], np.float32)
    got = interpret_kernel(kernel_of(body, [a], [out]), {"a": value})["out"]
    np.testing.assert_array_equal(got[:, 0], 3 * value.sum(axis=1))


def test_the_interpreter_is_independent():
    import tilecc.klr.interp as interp
    import tilecc.klr.interp_alu as interp_alu
    for module in (interp, interp_alu):
        source = open(module.__file__).read()
        for forbidden in ("tilecc.codegen", "tilecc.bir", "tilecc.sim"):
            assert forbidden not in source


def test_undefined_data_reaching_hbm_is_an_error_naming_the_first_read():
    """Computing on SBUF elements nothing wrote is allowed; storing the result into HBM is an
    error naming the HBM element and the statement that first read them (as in the BIR
    simulator); elements of an output nothing writes keep their zeros."""
    a, out = hbm("a", F32, (4, 8)), hbm("out", F32, (4, 8))
    x = sb("x", F32, (4, 8))
    left = k.AccessBasic(x, (k.Slice(0, 4, 1), k.Slice(0, 4, 1)))
    right = k.AccessBasic(x, (k.Slice(0, 4, 1), k.Slice(4, 8, 1)))
    out_left = k.AccessBasic(out, (k.Slice(0, 4, 1), k.Slice(0, 4, 1)))
    data = np.arange(32, dtype=np.float32).reshape(4, 8)
    ok = kernel_of([k.NcDmaCopy(left, k.AccessBasic(a, left.indexes)),
                    k.NcDmaCopy(out_left, left)], [a], [out])
    got = interpret_kernel(ok, {"a": data})["out"]
    np.testing.assert_array_equal(got[:, :4], data[:, :4])
    np.testing.assert_array_equal(got[:, 4:], 0)
    out_right = k.AccessBasic(out, right.indexes)
    bad = kernel_of([k.NcDmaCopy(left, k.AccessBasic(a, left.indexes)),
                     k.TensorScalar(right, right, k.Immediate(1.0), A.add),
                     k.NcDmaCopy(out_right, right)], [a], [out])
    with pytest.raises(InterpError, match=r"body\[2\] \(NcDmaCopy\): undefined data reaches HBM "
                                          r"tensor 'out' element \[0, 4\]; first read uninitialised "
                                          r"at body\[1\] \(TensorScalar\): 'x' element \[0, 4\]"):
        interpret_kernel(bad, {"a": data})
    np.testing.assert_array_equal(interpret_kernel(bad, {"a": data}, uninit="ignore")["out"][:, 4:], 1.0)
