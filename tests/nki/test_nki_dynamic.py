"""nisa.tensor_copy_dynamic_src / _dst: copies at a runtime offset within each partition,
on the simulator and the KLR interpreter against numpy; refusals as located errors."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.errors import SimError
from tilecc.nki import KernelError
from test_nki_tensor_engine import both


@nki.jit
def gather_columns(src, offsets):
    out = nl.ndarray((src.shape[0], offsets.shape[1]), dtype=src.dtype, buffer=nl.shared_hbm)
    table, offs = nl.load(src), nl.load(offsets)
    picked = nl.ndarray((src.shape[0], offsets.shape[1]), dtype=src.dtype, buffer=nl.sbuf)
    ix, iy = nl.mgrid[0:src.shape[0], 0:1]
    for i in nl.affine_range(offsets.shape[1]):
        picked[ix, i] = nisa.tensor_copy_dynamic_src(table[ix, offs[0, i] + iy])   # 1.x
    nl.store(out, picked)
    return out


def test_dynamic_source_columns():
    src = np.random.default_rng(0).standard_normal((128, 40)).astype(np.float32)
    offsets = np.array([[39, 0, 7, 7, 12]], np.int32)
    np.testing.assert_array_equal(both(gather_columns, src, offsets), src[:, offsets[0]])


@nki.jit
def scatter_blocks(src, offsets):
    out = nl.ndarray((src.shape[0], 8, 4), dtype=src.dtype, buffer=nl.shared_hbm)
    data, offs = nl.load(src), nl.load(offsets)
    placed = nl.ndarray((src.shape[0], 8, 4), dtype=src.dtype, buffer=nl.sbuf)
    nisa.memset(dst=placed, value=0.0)
    ix, _, iz = nl.mgrid[0:src.shape[0], 0:1, 0:4]
    for i in nl.affine_range(offsets.shape[1]):
        nisa.tensor_copy_dynamic_dst(dst=placed[ix, offs[0, i], iz], src=data[ix, i, iz])
    nl.store(out, placed)
    return out


def test_dynamic_destination_blocks():
    src = np.arange(16 * 3 * 4, dtype=np.float32).reshape(16, 3, 4)
    offsets = np.array([[5, 0, 7]], np.uint32)
    want = np.zeros((16, 8, 4), np.float32)
    want[:, offsets[0]] = src
    np.testing.assert_array_equal(both(scatter_blocks, src, offsets), want)


def test_an_offset_leaving_the_row_is_a_simulator_error():
    src = np.zeros((128, 40), np.float32)
    with pytest.raises(SimError, match="outside the row|out of its partitions' rows"):
        nki.simulate(gather_columns)(src, np.array([[40]], np.int32))


def marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if "# <-" in line)


def sb(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)


def float_offset(a):
    t, o = sb((128, 8)), sb((1, 4))
    t[:, o[0, 0] + nl.arange(1)[None, :]]  # <-


def two_offsets(a):
    t, o = sb((128, 8, 8)), sb((1, 4), nl.int32)
    t[:, o[0, 0], o[0, 1]]  # <-


def offset_on_partitions(a):
    t, o = sb((128, 8)), sb((1, 4), nl.int32)
    t[o[0, 0], 0:8]  # <-


def static_source(a):
    nisa.tensor_copy_dynamic_src(sb((128, 1)), sb((128, 1)))  # <-


CASES = [
    (float_offset, r"a dynamic offset must be one int32 / uint32 element of an on-chip tile"),
    (two_offsets, r"takes one dynamic offset, got 2"),
    (offset_on_partitions, r"must index a free dim, not the partition dim"),
    (static_source, r"src must be indexed with a dynamic offset"),
]


@pytest.mark.parametrize("kernel, message", CASES, ids=[c[0].__name__ for c in CASES])
def test_restriction_is_a_located_kernel_error(kernel, message):
    with pytest.raises(KernelError, match=message) as info:
        nki.trace_kernel(kernel, nki.ArgSpec((128, 8), np.float32))
    assert (info.value.path, info.value.line) == (__file__, marked_line(kernel))
