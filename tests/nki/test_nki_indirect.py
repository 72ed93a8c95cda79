"""Indirect DMA from the NKI frontend: nl.load(t[idx, ...]) / nl.store(t[idx, ...], v) and
dma_copy with t.ap(vector_offset=...), with oob_mode, against numpy on the simulator and
the KLR interpreter; the refusals as located KernelErrors."""

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


@nki.jit
def gather_rows_1x(table, ids):
    out = nl.ndarray((ids.shape[0], 8), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:ids.shape[0], 0:8]
    picked = nl.load(table[nl.load(ids), 2 + i_f], dtype=nl.float32)   # columns 2..9
    nl.store(out, picked)
    return out


def test_gather_a_column_window_of_rows_with_conversion():
    table = np.arange(40 * 12, dtype=np.int32).reshape(40, 12)
    ids = np.array([[5], [0], [39], [5]], np.int32)
    np.testing.assert_array_equal(both(gather_rows_1x, table, ids),
                                  table[ids[:, 0], 2:10].astype(np.float32))


@nki.jit
def gather_skip_2x(data, indices):
    P, F = indices.shape[0], data.shape[1]
    out = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((P, 1), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    rows = nl.ndarray((P, F), dtype=data.dtype, buffer=nl.sbuf)
    nisa.memset(dst=rows, value=-7.0)
    nisa.dma_copy(dst=rows, src=data.ap(pattern=[[F, P], [1, F]], vector_offset=idx, indirect_dim=0),
                  oob_mode=nisa.oob_mode.skip)
    nisa.dma_copy(dst=out, src=rows)
    return out


def test_gather_with_oob_skip_keeps_the_skipped_partitions():
    data = np.random.default_rng(0).standard_normal((10, 5)).astype(np.float32)
    indices = np.array([[3], [10], [0], [4294967295]], np.uint32)
    want = np.full((4, 5), -7.0, np.float32)
    want[[0, 2]] = data[[3, 0]]
    np.testing.assert_array_equal(both(gather_skip_2x, data, indices), want)


def test_gather_out_of_bounds_is_a_simulator_error_by_default():
    @nki.jit
    def strict(data, indices):
        out = nl.ndarray((2, 5), dtype=data.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(data[nl.load(indices), :]))
        return out

    with pytest.raises(Exception, match="index 10 of partition 1 is outside the 10 rows"):
        nki.simulate(strict)(np.zeros((10, 5), np.float32), np.array([[1], [10]], np.int32))


@nki.jit
def scatter_rows(values, ids, table):
    nl.store(table[nl.load(ids), :], nl.load(values))
    return table


def test_scatter_rows_into_an_argument():
    table = np.zeros((16, 4), np.float32)
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    ids = np.array([[15], [2], [7]], np.int32)
    want = table.copy()
    want[ids[:, 0]] = values
    np.testing.assert_array_equal(both(scatter_rows, values, ids, table), want)


def marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if "# <-" in line)


def idx_tile(dtype=nl.int32):
    return nl.ndarray((128, 1), dtype=dtype, buffer=nl.sbuf)


def index_on_chip_table(a):
    table = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
    table[idx_tile(), :]  # <-


def index_not_first(a):
    a[0:128, idx_tile()]  # <-


def wide_index(a):
    a[nl.ndarray((128, 2), dtype=nl.int32, buffer=nl.sbuf), :]  # <-


def index_again(a):
    a[idx_tile(), :][0]  # <-


def both_sides_indirect(a):
    nisa.dma_copy(dst=a[idx_tile(), :], src=a[idx_tile(), :])  # <-


def wrong_rows(a):
    nisa.dma_copy(dst=nl.ndarray((64, 8), dtype=nl.float32, buffer=nl.sbuf), src=a[idx_tile(), :])  # <-


def ap_wrong_first_pair(a):
    a.ap(pattern=[[4, 128], [1, 8]], vector_offset=idx_tile(), indirect_dim=0)  # <-


def ap_other_dim(a):
    a.ap(pattern=[[8, 128], [1, 8]], vector_offset=idx_tile(), indirect_dim=1)  # <-


CASES = [
    (index_on_chip_table, r"an index tile selects rows of a whole HBM tensor"),
    (index_not_first, r"only the first index may be a tile of row numbers"),
    (wide_index, r"the index must be a \[P, 1\] int32 / uint32 tile on chip, got a \[128, 2\]"),
    (index_again, r"is an indirect \(index-tile\) access; it can only be loaded"),
    (both_sides_indirect, r"only one side of a DMA may be indirect"),
    (wrong_rows, r"must be \[128, 8\] \(one partition per index, one row each\)"),
    (ap_wrong_first_pair, r"the first pair must step one row per index, \[8, 128\]"),
    (ap_other_dim, r"needs a vector_offset tile and indirect_dim=0"),
]


@pytest.mark.parametrize("kernel, message", CASES, ids=[c[0].__name__ for c in CASES])
def test_restriction_is_a_located_kernel_error(kernel, message):
    with pytest.raises(KernelError, match=message) as info:
        nki.trace_kernel(kernel, nki.ArgSpec((128, 8), np.float32))
    assert (info.value.path, info.value.line) == (__file__, marked_line(kernel))


@nki.jit
def scatter_add_rows(values, ids, table):
    rows = nl.load(values)
    nisa.dma_copy(dst=table[nl.load(ids), :], src=rows, dst_rmw_op=np.add)
    return table


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16], ids=str)
def test_scatter_add_with_a_repeated_row(dtype):
    table = np.full((8, 4), 0.5, dtype)
    values = (np.arange(16, dtype=np.float32).reshape(4, 4) / 3).astype(dtype)
    ids = np.array([[6], [1], [6], [6]], np.int32)
    want = table.astype(np.float32)
    for p, row in enumerate(ids[:, 0]):      # one read-modify-write per partition, in order
        want[row] = (want[row] + values[p].astype(np.float32)).astype(dtype).astype(np.float32)
    got = both(scatter_add_rows, values, ids, table)
    np.testing.assert_array_equal(got.astype(np.float32), want)


def test_dma_copy_accumulate_on_plain_tensors():
    @nki.jit
    def add_into(a, out):
        nisa.dma_copy(dst=out, src=nl.load(a), dst_rmw_op=nl.add)
        return out

    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(both(add_into, a, np.ones((2, 4), np.float32)), a + 1)
