"""Index shapes as numpy's advanced indexing gives them, and NKI's broadcasting of two tiles in
nl's elementwise ops (tilecc/nki/broadcasting.py), in the forms published kernels use: the
indirect load of the SDK's nl.load example (`idx_tile = nl.load(idx_tensor[i_p])` is
[64, 1]), the nki.errors page's `tmp[i, 0]`, 3-index nl.mgrid grids with a unit axis, and
tiles of shapes that differ only by size-1 dims."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.language as nl
from tilecc.nki.errors import KernelError

BACKENDS = ["bir", "klr"]


def _shape_of(build, array):
    """The shape of the view `build(kernel_argument)` makes, while tracing."""
    seen = []

    def kernel(a):
        seen.append(tuple(build(a).shape))
        out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=0.0)
        return out
    nki.trace_kernel(kernel, array)
    return seen[0]


V64 = np.zeros(64, np.float32)
M = np.zeros((128, 72), np.float32)


@pytest.mark.parametrize("build, numpy_index, array", [
    (lambda v: v[nl.arange(64)[:, None]], lambda: np.arange(64)[:, None], V64),
    (lambda v: v[nl.arange(64)], lambda: np.arange(64), V64),
    (lambda m: m[nl.arange(128)[:, None], nl.arange(72)[None, :]],
     lambda: (np.arange(128)[:, None], np.arange(72)[None, :]), M),
    (lambda m: m[nl.arange(8)[:, None], 3], lambda: (np.arange(8)[:, None], 3), M),
    (lambda m: m[5, nl.arange(72)[None, :]], lambda: (5, np.arange(72)[None, :]), M),
    (lambda m: m[nl.arange(128)[:, None, None], nl.arange(72)[None, :, None]],
     lambda: (np.arange(128)[:, None, None], np.arange(72)[None, :, None]), M),
], ids=["v[i_p]", "v[arange]", "m[i_p, i_f]", "m[i_p, 3]", "m[5, i_f]", "m[ip3, if3]"])
def test_hbm_index_shapes_are_numpys(build, numpy_index, array):
    assert _shape_of(build, array) == np.empty(array.shape)[numpy_index()].shape


def test_tile_index_shapes_are_numpys():
    """The nki.errors page's form (err_1d_arange_not_supported): `tmp[i, 0]` with
    i = nl.arange(64)[:, None] is a [64, 1] tile; a row `t[0, i_f]` keeps its partition dim."""
    def column(_):
        tmp = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        return tmp[nl.arange(64)[:, None], 0]

    def row(_):
        tmp = nl.zeros((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        return tmp[0, nl.arange(8)[None, :]]

    def grid(_):
        i_p, i_f, i_one = nl.mgrid[0:16, 0:8, 0:1]
        return nl.zeros((16, 8), dtype=nl.float32, buffer=nl.sbuf)[i_p, i_f]
    assert _shape_of(column, V64) == (64, 1)
    assert _shape_of(row, V64) == (1, 8)
    assert _shape_of(grid, V64) == (16, 8, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_sdk_indirect_load_with_an_index_column(backend):
    """nl.load's indirect example: indices loaded as a [64, 1] tile, then `idx_tile[i_p, 0]`."""
    def kernel(data_tensor, idx_tensor):
        out = nl.ndarray([64, 512], dtype=data_tensor.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(64)[:, None]
        i_f = nl.arange(512)[None, :]
        idx_tile = nl.load(idx_tensor[i_p])
        assert idx_tile.shape == (64, 1)
        nl.store(out, value=nl.load(data_tensor[idx_tile[i_p, 0], i_f]))
        return out
    data = np.arange(128 * 512, dtype=np.float32).reshape(128, 512)
    idx = (2 * np.arange(64, dtype=np.int32))[::-1].copy()
    np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(data, idx), data[idx])


def _elementwise(op, a_view, b_view, out_shape):
    """A kernel computing `op(a_view(tile_a), b_view(tile_b))` and storing it as out_shape."""
    def kernel(a, b):
        out = nl.ndarray(out_shape, dtype=nl.float32, buffer=nl.shared_hbm)
        result = op(a_view(a), b_view(b))
        assert tuple(result.shape) == out_shape, result.shape
        nl.store(out, value=result)
        return out
    return kernel


RNG = np.random.default_rng(13)
A = RNG.normal(size=(64, 6)).astype(np.float32)
B = RNG.normal(size=(64, 6)).astype(np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["column_and_vector", "unit_axis", "outer", "column_3d"])
def test_tiles_that_differ_by_size_one_dims(case, backend):
    ip, jf = nl.arange(64)[:, None], nl.arange(6)[None, :]
    ip3, jf3, k3 = nl.arange(64)[:, None, None], nl.arange(6)[None, :, None], nl.arange(6)[None, None, :]
    cases = {
        # [64] + [64, 1]: a 1-d arange view and a numpy-shaped column
        "column_and_vector": (nl.add, lambda a: nl.load(a[nl.arange(64), 0]),
                              lambda b: nl.load(b[ip, 0]), (64, 1),
                              A[:, :1] + B[:, :1]),
        # [64, 6, 1] * [64, 6]: equal but for a size-1 free dim
        "unit_axis": (nl.multiply, lambda a: nl.load(a[ip3, jf3]), lambda b: nl.load(b[ip, jf]),
                      (64, 6, 1), (A * B)[:, :, None]),
        # [64, 1, 6] - [64, 6, 1]: numpy's per-dim broadcast, [64, 6, 6]
        "outer": (nl.subtract, lambda a: nl.load(a[ip3, k3]), lambda b: nl.load(b[ip3, jf3]),
                  (64, 6, 6), A[:, None, :] - B[:, :, None]),
        # [64, 6, 1] / [64, 1, 1]: a column of a higher rank
        "column_3d": (nl.divide, lambda a: nl.load(a[ip3, jf3]),
                      lambda b: nl.load(b[ip3, 2]), (64, 6, 1),
                      (A / B[:, 2:3])[:, :, None]),
    }
    op, a_view, b_view, shape, want = cases[case]
    got = nki.simulate(_elementwise(op, a_view, b_view, shape), backend=backend)(A, B)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("a_shape, b_shape", [((128, 8), (128, 4)), ((128, 2, 3), (128, 3, 2)),
                                              ((128, 6), (128, 2, 3)), ((64, 4), (32, 4))])
def test_shapes_that_do_not_broadcast_are_refused(a_shape, b_shape):
    def kernel(a, b):
        out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.add(nl.load(a), nl.load(b))
        return out
    with pytest.raises(KernelError, match=r"nl.add: shape mismatch: "):
        nki.trace_kernel(kernel, np.zeros(a_shape, np.float32), np.zeros(b_shape, np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_isa_tensor_tensor_takes_operands_that_differ_by_size_one_dims(backend):
    """nisa.tensor_tensor takes operands of one element count per partition: a [64] view and a
    [64, 1] tile (numpy's shapes of v[nl.arange(64)] and v[nl.arange(64)[:, None]])."""
    import tilecc.nki.isa as nisa

    def kernel(a):
        out = nl.ndarray((64, 1), dtype=a.dtype, buffer=nl.shared_hbm)
        flat, column = nl.load(a[nl.arange(64)]), nl.load(a[nl.arange(64)[:, None]])
        result = nl.ndarray((64, 1), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=result, data1=flat, data2=column, op=nl.subtract)
        nisa.tensor_tensor(dst=result, data1=result, data2=flat, op=nl.add)
        nl.store(out, value=result)
        return out
    a = np.arange(64, dtype=np.float32) * 1.5
    np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(a), a[:, None])
