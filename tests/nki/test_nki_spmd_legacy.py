"""SPMD launch grids, NKI 1.x entry points (simulate_kernel, @nki.trace, tile-returning
nki.isa forms) and partial tiles: results on real values and the errors around them."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.errors import TileccError
from tilecc.nki import KernelError


@nki.jit
def row_block_ids(a):
    """Each program writes its (i, j) ids and the grid size into its [1, 4] block."""
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(axis=1)
    gx, gy = nl.num_programs((0, 1))
    tile = nl.load(a[i, j])
    tile = nisa.tensor_scalar(tile, nl.multiply, 0.0, op1=nl.add,
                              operand1=float(1000 * i + 100 * j + 10 * gx + gy + nl.program_ndim()))
    nl.store(out[i, j], tile)
    return out


def test_grid_program_ids_cover_every_instance_in_one_kernel():
    a = np.zeros((3, 2, 1, 4), np.float32)
    got = row_block_ids[3, 2](a)
    want = np.array([[[1000 * i + 100 * j + 32 + 2] * 4 for j in range(2)] for i in range(3)],
                    np.float32).reshape(3, 2, 1, 4)
    np.testing.assert_array_equal(got, want)
    traced = nki.trace_kernel(row_block_ids[3, 2], a)
    assert len(traced.kernel.outputs) == 1          # one shared output for all 6 programs
    np.testing.assert_array_equal(nki.simulate(row_block_ids[3, 2], backend="klr")(a), want)


def test_without_a_grid_program_id_is_zero_and_num_programs_one():
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_scalar(nl.load(a), nl.add, float(nl.program_id(0) + nl.num_programs())))
        return out

    np.testing.assert_array_equal(kernel(np.full((2, 3), -1.5, np.float32)), np.full((2, 3), -0.5, np.float32))


@pytest.mark.parametrize("grid", [(0,), (2, -1), ("2",), (True,)])
def test_bad_launch_grid_is_rejected(grid):
    with pytest.raises(TileccError, match="a launch grid is one or more positive ints"):
        row_block_ids[grid]


def test_program_id_axis_outside_the_grid_points_at_the_line():
    @nki.jit
    def kernel(a):
        i = nl.program_id(2)  # <-
        return a

    with pytest.raises(KernelError, match=r"nl.program_id\(2\): the launch grid has 2 axis/axes \[2, 2\]") as info:
        kernel[2, 2](np.zeros((2, 2), np.float32))
    assert "# <-" in info.value.source_line


def test_instances_must_allocate_the_same_shared_hbm_tensors():
    @nki.jit
    def kernel(a):
        out = nl.ndarray((nl.program_id(0) + 1, 4), dtype=a.dtype, buffer=nl.shared_hbm)  # <-
        return out

    with pytest.raises(KernelError, match=r"program \[1\] allocates HBM \[2, 4\] float32 where program "
                                          r"\[0\] allocated out\[1, 4\] float32") as info:
        kernel[2](np.zeros((2, 4), np.float32))
    assert "# <-" in info.value.source_line


def test_simulate_kernel_overwrites_out_parameters_and_keeps_inputs():
    @nki.trace
    def negate_into(a, out):
        nl.store(out, nisa.tensor_scalar(nl.load(a), nl.multiply, -1.0))

    a = np.array([[1.0, -2.0, np.inf]], np.float32)
    out = np.zeros((1, 3), np.float32)
    assert nki.simulate_kernel(negate_into, a, out) is None
    np.testing.assert_array_equal(out, [[-1.0, 2.0, -np.inf]])
    np.testing.assert_array_equal(a, [[1.0, -2.0, np.inf]])


def test_helper_jit_kernel_called_inside_a_kernel_is_traced_inline():
    @nki.jit
    def double_into(src, dst):
        nisa.tensor_scalar(dst=dst, data=src, op0=nl.multiply, operand0=2.0)

    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        tile = nl.load(a)
        doubled = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        double_into(tile, doubled)
        nl.store(out, doubled)
        return out

    a = np.array([[3.0, -0.25]], np.float32)
    np.testing.assert_array_equal(kernel(a), 2 * a)
    assert len(kernel.trace(a).body) == 3         # load, tensor_scalar, store: no nested kernel


@pytest.mark.parametrize("call, expected", [
    (lambda t: nisa.tensor_tensor(t, t, nl.subtract), lambda x: x - x),
    (lambda t: nisa.tensor_tensor(data1=t, data2=t, op=nl.maximum, dtype=nl.bfloat16), lambda x: x),
    (lambda t: nisa.activation(nl.exp, t, scale=-1.0), lambda x: np.exp(-x)),
    (lambda t: nisa.tensor_reduce(nl.maximum, t, axis=1, keepdims=True), lambda x: x.max(1, keepdims=True)),
    (lambda t: nisa.tensor_scalar(t, np.subtract, 1.0, True, np.multiply, 3.0), lambda x: (1 - x) * 3),
    (lambda t: nisa.tensor_copy(t, dtype=nl.int32), lambda x: x.astype(np.int32)),
    (lambda t: nisa.tensor_tensor_scan(t, t, 0.0, np.multiply, np.add), None),
    (lambda t: nisa.memset((2, 3), -7, nl.int16), lambda x: np.full((2, 3), -7, np.int16)),
])
def test_tile_returning_forms(call, expected):
    @nki.jit
    def kernel(a):
        result = call(nl.load(a))
        out = nl.ndarray(result.shape, dtype=result.dtype, buffer=nl.shared_hbm)
        nl.store(out, result)
        return out

    a = np.array([[0.5, -1.0, 4.0], [2.0, 0.0, -3.0]], np.float32)
    got = kernel(a)
    if expected is None:   # scan: r[i] = a[i] * r[i-1] + a[i]
        want = np.zeros_like(a)
        for i in range(3):
            want[:, i] = a[:, i] * (want[:, i - 1] if i else 0) + a[:, i]
    else:
        want = expected(a)
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, np.float64), rtol=1e-2)
    if expected is not None and np.asarray(want).dtype != np.float32:
        assert got.dtype == np.asarray(want).dtype


def test_a_call_matching_neither_form_names_both_signatures():
    @nki.jit
    def kernel(a):
        nisa.tensor_tensor(nl.load(a))  # <-
        return a

    with pytest.raises(KernelError, match=r"nisa.tensor_tensor: missing a required argument: 'data2'; "
                                          r"expected tensor_tensor\(dst, data1, data2, op, "
                                          r"engine=engine.unknown, name=None\) or the tile-returning "
                                          r"form tensor_tensor\(data1, data2, op, \*, dtype=None, "
                                          r"mask=None, engine=None\)") as info:
        kernel(np.zeros((2, 2), np.float32))
    assert "# <-" in info.value.source_line


def test_full_tiles_with_different_partitions_are_a_shape_mismatch():
    @nki.jit
    def kernel(a, b):
        x = nl.load(a) + nl.load(b)  # <-
        return a

    with pytest.raises(KernelError, match=r"nl.add: shape mismatch: \[64, 8\] and \[128, 8\] have "
                                          r"different partition counts"):
        kernel(np.zeros((64, 8), np.float32), np.zeros((128, 8), np.float32))


def test_partial_tile_with_a_full_tile_computes_on_the_rows_it_holds():
    @nki.jit
    def kernel(a, bias):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        ip, jf = nl.mgrid[0:128, 0:4]
        full = nl.load(bias)
        for t in nl.affine_range(2):
            live = t * 128 + ip < a.shape[0]
            x = nl.load(a[t * 128 + ip, jf], mask=live)
            nl.store(out[t * 128 + ip, jf], value=x * full, mask=live)
        return out

    rng = np.random.default_rng(5)
    a = rng.normal(size=(150, 4)).astype(np.float32)
    bias = rng.normal(size=(128, 4)).astype(np.float32)
    want = a * np.concatenate([bias, bias[:22]])
    np.testing.assert_array_equal(kernel(a, bias), want)
