"""nl.matmul / nl.transpose / nl.load_transpose2d / nl.shared_identity_matrix and
nisa.dma_transpose against numpy on the simulator and the KLR interpreter, and the
dma_transpose restrictions as located KernelErrors."""

from __future__ import annotations

import inspect

import ml_dtypes
import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki import KernelError
from test_nki_tensor_engine import both

BF16 = ml_dtypes.bfloat16


@nki.jit
def tile_matmul(a, b):
    out = nl.ndarray((a.shape[0], b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, nl.copy(nl.matmul(nl.load(a), nl.load(b))))
    return out


@pytest.mark.parametrize("m, k, n", [(64, 96, 200), (16, 16, 8), (128, 128, 512)], ids=str)
def test_nl_matmul_inserts_the_transpose(m, k, n):
    rng = np.random.default_rng(m + k + n)
    a = rng.integers(-4, 5, (m, k)).astype(np.float32)
    b = rng.integers(-4, 5, (k, n)).astype(np.float32)
    np.testing.assert_array_equal(both(tile_matmul, a, b), a @ b)


def test_identity_transpose_and_transpose_x():
    @nki.jit
    def doc_example(a):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        eye = nl.shared_identity_matrix(n=128, dtype=nl.float32)
        ones = nl.full((128, 128), 1.0, dtype=nl.float32, buffer=nl.sbuf)
        product = nl.copy(nl.matmul(eye, ones, transpose_x=True))   # identity.T @ ones = ones
        flipped = nl.copy(nl.transpose(eye))                           # transpose of identity
        nl.store(out, nl.add(product, flipped))
        return out

    np.testing.assert_array_equal(both(doc_example, np.zeros((1, 1), np.float32)),
                                  1.0 + np.eye(128, dtype=np.float32))


@pytest.mark.parametrize("dtype", [np.float32, BF16, np.int32], ids=str)
def test_load_transpose2d(dtype):
    @nki.jit
    def kernel(a):
        out = nl.ndarray((a.shape[1], a.shape[0]), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.load_transpose2d(a, dtype=nl.float32))
        return out

    a = np.arange(300 * 100).reshape(300, 100).astype(dtype)
    np.testing.assert_array_equal(both(kernel, a), a.T.astype(np.float32))


@pytest.mark.parametrize("shape", [(3, 40, 24), (2, 16, 8)], ids=str)
def test_load_transpose2d_of_a_view_inside_a_3d_tensor(shape):
    @nki.jit
    def kernel(a):
        out = nl.ndarray((a.shape[0], a.shape[2], a.shape[1]), dtype=a.dtype, buffer=nl.shared_hbm)
        for b in nl.affine_range(a.shape[0]):
            rows = nl.arange(a.shape[1])[:, None]
            nl.store(out[b], nl.load_transpose2d(a[b, rows, nl.arange(a.shape[2])[None, :]]))
        return out

    a = np.arange(int(np.prod(shape))).reshape(shape).astype(BF16)
    np.testing.assert_array_equal(both(kernel, a), a.transpose(0, 2, 1))


def test_dma_transpose_of_gathered_rows():
    @nki.jit
    def kernel(table, ids):
        idx = nl.load(ids)
        i_p = nl.arange(ids.shape[0])[:, None]
        iy = nl.arange(table.shape[1])[None, :, None]
        iz = nl.arange(table.shape[2])[None, None, :]
        got = nisa.dma_transpose(table[idx[i_p, 0], iy, iz], axes=(2, 1, 0))
        out = nl.ndarray(got.shape, dtype=table.dtype, buffer=nl.shared_hbm)
        nl.store(out, got)
        return out

    table = np.arange(16 * 3 * 4).reshape(16, 3, 4).astype(BF16)
    ids = np.array([[5], [0], [15], [5], [9], [2], [2], [11]], np.int32)
    np.testing.assert_array_equal(both(kernel, table, ids), table[ids[:, 0]].transpose(2, 1, 0))


def test_tile_returning_dma_transpose_takes_dge_mode():
    @nki.jit
    def kernel(a):
        out = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.dma_transpose(a[:, :], dge_mode=nisa.dge_mode.hwdge))
        return out

    a = np.arange(16 * 8).reshape(16, 8).astype(BF16)
    np.testing.assert_array_equal(both(kernel, a), a.T)


@pytest.mark.parametrize("shape, axes", [((16, 8), (1, 0)), ((2, 3, 4), (2, 1, 0)),
                                         ((2, 3, 4, 5), (3, 1, 2, 0))], ids=str)
def test_dma_transpose_every_rank(shape, axes):
    @nki.jit
    def kernel(a):
        want = tuple(a.shape[i] for i in axes)
        out = nl.ndarray(want, dtype=a.dtype, buffer=nl.shared_hbm)
        landed = nl.ndarray(want, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_transpose(dst=landed, src=a, axes=axes, dge_mode=nisa.dge_mode.hwdge
                           if len(shape) == 2 else nisa.dge_mode.unknown)
        nl.store(out, landed)
        return out

    a = np.arange(int(np.prod(shape))).reshape(shape).astype(BF16)
    np.testing.assert_array_equal(both(kernel, a), a.transpose(axes))


def marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if "# <-" in line)


def sb(shape, dtype=nl.bfloat16):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)


def wrong_axes(a):
    nisa.dma_transpose(sb((8, 16)), sb((16, 8)), axes=(0, 1))  # <-


def wrong_dst_shape(a):
    nisa.dma_transpose(sb((16, 8)), sb((16, 8)))  # <-


def dtype_change(a):
    nisa.dma_transpose(sb((8, 16), nl.float32), sb((16, 8)))  # <-


def dst_in_psum(a):
    nisa.dma_transpose(nl.ndarray((8, 16), dtype=nl.bfloat16, buffer=nl.psum), sb((16, 8)))  # <-


def five_dims(a):
    nisa.dma_transpose(sb((2, 2, 2, 2, 2)), sb((2, 2, 2, 2, 2)))  # <-


def hwdge_rows(a):
    nisa.dma_transpose(sb((8, 32)), sb((32, 8)), dge_mode=nisa.dge_mode.hwdge)  # <-


def hwdge_dtype(a):
    nisa.dma_transpose(sb((8, 16), nl.float32), sb((16, 8), nl.float32), dge_mode=nisa.dge_mode.hwdge)  # <-


def oob_skip(a):
    nisa.dma_transpose(sb((8, 16)), sb((16, 8)), oob_mode=nisa.oob_mode.skip)  # <-


def load_transpose_of_a_tile(a):
    nl.load_transpose2d(sb((16, 8)))  # <-


def transpose_3d(a):
    nl.transpose(sb((16, 2, 4)))  # <-


def embedded_constant(a):
    nl.shared_constant(np.arange(16, dtype=np.float32).reshape(4, 4))  # <-


CASES = [
    (embedded_constant, r"nl.shared_constant is not supported by tilecc for this data: a KLR kernel "
                        r"carries no constant data"),
    (wrong_axes, r"axes \(0, 1\) is not supported; a 2-d transpose has axes \(1, 0\)"),
    (wrong_dst_shape, r"dst \[16, 8\] must be \[8, 16\]"),
    (dtype_change, r"dst dtype float32 must be src's bfloat16"),
    (dst_in_psum, r"dma_transpose: dst must be a tile in SBUF"),
    (five_dims, r"must both be 2-d, 3-d or 4-d"),
    (hwdge_rows, r"needs src.shape\[0\] == 16, got 32"),
    (hwdge_dtype, r"a 2-byte dtype"),
    (oob_skip, r"oob_mode skip needs an indirect src"),
    (load_transpose_of_a_tile, r"nl.load_transpose2d: src must be a 2-d HBM tensor"),
    (transpose_3d, r"nl.transpose: x must be a 2-d tile"),
]


@pytest.mark.parametrize("kernel, message", CASES, ids=[c[0].__name__ for c in CASES])
def test_restriction_is_a_located_kernel_error(kernel, message):
    with pytest.raises(KernelError, match=message) as info:
        nki.trace_kernel(kernel, nki.ArgSpec((128, 8), np.float32))
    assert (info.value.path, info.value.line) == (__file__, marked_line(kernel))


def test_shared_constants_built_by_instructions():
    @nki.jit
    def kernel(a):
        eye = nl.shared_constant(np.identity(128, dtype=np.int8), dtype=nl.bfloat16)
        halves = nl.shared_constant(np.full((300, 5), 0.5, np.float32))
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        col = nl.ndarray((300, 5), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.copy(nl.load(eye), dtype=nl.float32))
        for i in nl.affine_range(3):
            nl.store(col[i * 100:(i + 1) * 100], nl.load(halves[i * 100:(i + 1) * 100]))
        return out, col

    eye, col = nki.simulate(kernel)(np.zeros((1, 1), np.float32))
    np.testing.assert_array_equal(eye, np.eye(128, dtype=np.float32))
    np.testing.assert_array_equal(col, np.full((300, 5), 0.5, np.float32))


def test_store_straight_from_psum_and_1x_forms():
    """NKI 1.x kernels store a matmul result from PSUM, spell perf_mode as a string and
    call dma_transpose without dst."""
    @nki.jit
    def kernel(a, b, c):
        out = nl.ndarray((4, 6), dtype=nl.float32, buffer=nl.shared_hbm)
        flipped = nl.ndarray((c.shape[1], c.shape[0]), dtype=c.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_matmul(nl.load(a.view(nl.float8_e5m2)), nl.load(b),
                                     perf_mode="double_row_gen3"))
        nl.store(flipped, nisa.dma_transpose(c))
        return out, flipped

    rng = np.random.default_rng(3)
    a = rng.integers(-2, 3, (128, 2, 4)).astype(ml_dtypes.float8_e5m2)
    b = rng.integers(-2, 3, (128, 2, 6)).astype(ml_dtypes.float8_e5m2)
    c = np.arange(16 * 8).reshape(16, 8).astype(BF16)
    got, flipped = nki.simulate(kernel)(a, b, c)
    np.testing.assert_array_equal(got, np.einsum("ptm,ptn->mn", a.astype(np.float32), b.astype(np.float32)))
    np.testing.assert_array_equal(flipped, c.T)
