"""Machine state: placement, access-pattern views, bounds / partition / init checks."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.bir.enums import BirDtype, EngineType, MemoryKind
from tilecc.bir.inst import AccessPattern, InstMemset, MemoryLocation
from tilecc.errors import SimError
from tilecc.sim.machine import SBUF_BYTES, Machine

F32 = BirDtype.float32


def sb(m: Machine, name: str, parts: int, row: int, kind=MemoryKind.SB, dtype=F32):
    size = np.dtype(np.float32).itemsize if dtype == F32 else 2
    return m.place(MemoryLocation(name, kind, dtype, parts, row * size))


def ap(name: str, row: int, parts: int, free, offset=0, dtype=F32):
    return AccessPattern(name, dtype, offset, ((row, parts), *free))


def test_views_are_strided_windows_without_copies():
    m = Machine()
    sb(m, "t", 128, 16)
    whole = m.view(ap("t", 16, 128, [(1, 16)]), write=True)
    whole[...] = np.arange(128 * 16, dtype=np.float32).reshape(128, 16)
    # columns 1, 3, 5 of partitions 32..63, read as [32, 3]
    part = m.view(ap("t", 16, 32, [(2, 3)], offset=32 * 16 + 1), write=False)
    np.testing.assert_array_equal(part, whole[32:64, 1:7:2])
    assert np.shares_memory(part, m.sbuf)
    # broadcast (step 0) and reversed (negative step) pairs
    bcast = m.view(ap("t", 16, 1, [(0, 4), (1, 2)]), write=False)
    np.testing.assert_array_equal(bcast, np.broadcast_to(whole[0:1, 0:2][:, None, :], (1, 4, 2)))
    rev = m.view(ap("t", 16, 1, [(-1, 16)], offset=15), write=False)
    np.testing.assert_array_equal(rev[0], whole[0, ::-1])


def test_multi_dim_free_pattern_is_row_major():
    m = Machine()
    sb(m, "t", 2, 24)
    m.view(ap("t", 24, 2, [(1, 24)]), write=True)[...] = np.arange(48, dtype=np.float32).reshape(2, 24)
    v = m.view(ap("t", 24, 2, [(12, 2), (4, 3), (1, 4)]), write=False)
    np.testing.assert_array_equal(v, np.arange(48, dtype=np.float32).reshape(2, 2, 3, 4))


@pytest.mark.parametrize("start, parts, ok", [
    (0, 128, True), (32, 32, True), (64, 32, True), (96, 32, True), (64, 64, True),
    (16, 16, False), (32, 64, False), (64, 65, False), (96, 33, False),
])
def test_start_partition_rule(start, parts, ok):
    m = Machine()
    sb(m, "t", 128, 4)
    access = ap("t", 4, parts, [(1, 4)], offset=start * 4)
    if ok:
        m.view(access, write=True)
    else:
        with pytest.raises(SimError, match=f"starts at partition {start}|reaches partitions {start}"):
            m.view(access, write=True)


def test_bounds_errors_name_the_indices():
    m = Machine()
    sb(m, "t", 64, 8)
    with pytest.raises(SimError, match=r"free elements 4\.\.11; the location's row holds 0\.\.7"):
        m.view(ap("t", 8, 1, [(1, 8)], offset=4), write=True)
    with pytest.raises(SimError, match=r"partitions 0\.\.127; the location has 64"):
        m.view(ap("t", 8, 128, [(1, 8)]), write=True)
    with pytest.raises(SimError, match=r"spans 129 partitions \(1\.\.128\)"):
        m.view(ap("t", 8, 129, [(1, 8)]), write=True)
    with pytest.raises(SimError, match="spans 0 partitions"):
        m.view(ap("t", 8, 0, [(1, 8)]), write=True)
    with pytest.raises(SimError, match=r"empty pair \[1, 0\]"):
        m.view(ap("t", 8, 1, [(1, 0)]), write=True)
    with pytest.raises(SimError, match="partition step 4"):
        m.view(AccessPattern("t", F32, 0, ((4, 2), (1, 8))), write=True)
    with pytest.raises(SimError, match="undeclared memory location 'nope'"):
        m.view(ap("nope", 8, 1, [(1, 8)]), write=True)
    with pytest.raises(SimError, match="reads bfloat16 elements of a float32"):
        m.view(ap("t", 8, 1, [(1, 8)], dtype=BirDtype.bfloat16), write=True)


def test_undefined_reads_are_recorded_and_reaching_hbm_names_the_element():
    m = Machine()
    sb(m, "t", 32, 8)
    m.place(MemoryLocation("h", MemoryKind.HBM, F32, 32, 8 * 4))
    m.begin(InstMemset("fill", EngineType.DVE, [], []))
    m.view(ap("t", 8, 32, [(1, 4)]), write=True)[...] = 1.0
    m.finish()
    np.testing.assert_array_equal(m.undefined(ap("t", 8, 32, [(1, 8)]))[0], [False] * 4 + [True] * 4)
    m.begin(InstMemset("copy", EngineType.DVE, [], []))
    src = m.view(ap("t", 8, 32, [(1, 8)]), write=False)
    m.view(AccessPattern("h", F32, 0, ((8, 32), (1, 8))), write=True)[...] = src
    with pytest.raises(SimError, match=r"undefined data reaches HBM tensor 'h' element \[0, 4\]; "
                                       r"first read uninitialised at copy \(Memset\): 't' element "
                                       r"\[0, 4\] was never written"):
        m.finish()


def test_reset_returns_to_power_on():
    m = Machine()
    sb(m, "t", 4, 4)
    m.begin(InstMemset("fill", EngineType.DVE, [], []))
    m.view(ap("t", 4, 4, [(1, 4)]), write=True)[...] = 7.0
    m.finish()
    assert not m.undefined(ap("t", 4, 4, [(1, 4)])).any()
    m.act_acc[:] = 3.0
    m.reset()
    assert not m.placements and not m.act_acc.any()
    sb(m, "t", 4, 4)
    assert m.undefined(ap("t", 4, 4, [(1, 4)])).all()
    # what the run before left on these bytes is gone (cleared when first read)
    assert not m.view(ap("t", 4, 4, [(1, 4)]), write=False).any()


def test_capacity_and_partition_limits():
    m = Machine()
    m.place(MemoryLocation("big", MemoryKind.SB, F32, 128, SBUF_BYTES - 64))
    with pytest.raises(SimError, match="does not fit in SB"):
        m.place(MemoryLocation("more", MemoryKind.SB, F32, 128, 128))
    with pytest.raises(SimError, match="129 partitions"):
        m.place(MemoryLocation("wide", MemoryKind.PSUM, F32, 129, 4))
    with pytest.raises(SimError, match="declared twice"):
        m.place(MemoryLocation("big", MemoryKind.SB, F32, 1, 4))


def test_locations_do_not_overlap():
    m = Machine()
    a = sb(m, "a", 128, 3)
    b = sb(m, "b", 128, 5, kind=MemoryKind.SB)
    assert b.base >= a.base + 12 and b.base % 64 == 0
    m.view(ap("a", 3, 128, [(1, 3)]), write=True)[...] = 1.0
    m.view(ap("b", 5, 128, [(1, 5)]), write=True)[...] = 2.0
    np.testing.assert_array_equal(m.view(ap("a", 3, 128, [(1, 3)]), write=False), 1.0)


def test_hbm_is_flat():
    m = Machine()
    m.place(MemoryLocation("h", MemoryKind.HBM, F32, 4, 16))
    v = m.view(AccessPattern("h", F32, 0, ((4, 4), (1, 4))), write=True)
    v[...] = np.arange(16, dtype=np.float32).reshape(4, 4)
    # transpose through strides: [1, 4] then [4, 4]
    t = m.view(AccessPattern("h", F32, 0, ((1, 4), (4, 4))), write=False)
    np.testing.assert_array_equal(t, np.arange(16, dtype=np.float32).reshape(4, 4).T)
    with pytest.raises(SimError, match=r"reaches elements 1\.\.16"):
        m.view(AccessPattern("h", F32, 1, ((4, 4), (1, 4))), write=False)


def test_dma_views_skip_the_start_partition_rule():
    m = Machine()
    sb(m, "t", 128, 4)
    access = ap("t", 4, 5, [(1, 4)], offset=5 * 4)
    m.view(access, write=True, dma=True)[...] = 7.0
    assert m.view(access, write=False, dma=True).tolist() == [[7.0] * 4] * 5
    with pytest.raises(SimError, match="starts at partition 5"):
        m.view(access, write=False)
