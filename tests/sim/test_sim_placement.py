"""SB / PSUM locations that do not fit side by side share bytes when their lives do not
overlap (sim/placement.py); bytes a location takes over are undefined again."""

from __future__ import annotations

import numpy as np
import pytest

from bir_builders import ProgramBuilder, imm
from tilecc.bir.enums import AluOpType, EngineType, MemoryKind
from tilecc.bir.inst import InstTensorScalarPtr
from tilecc.errors import SimError
from tilecc.sim.placement import plan_columns

ROW = 24 * 1024 // 4   # 24 KiB per partition of float32: eight of them fill SBUF


def chain(pb: ProgramBuilder, n_tiles: int, read_before_write: int | None = None) -> None:
    """a -> t0 -> t1 -> ... -> out, each tile t_i = t_{i-1} * 2 + i, then dead."""
    pb.arg_in("a", (128, ROW))
    prev = pb.tile("t0", (128, ROW))
    pb.load("t0", "a")
    for i in range(1, n_tiles):
        cur = pb.tile(f"t{i}", (128, ROW))
        src = cur if i == read_before_write else prev
        pb.add(InstTensorScalarPtr(f"step{i}", EngineType.DVE, [pb.ap(src), imm(2.0), imm(float(i))],
                                   [pb.ap(cur)], op0=AluOpType.mult, op1=AluOpType.add))
        prev = cur
    pb.arg_out("out", (128, ROW))
    pb.store("out", prev)


def test_tiles_living_one_after_another_share_sbuf():
    pb = ProgramBuilder()
    chain(pb, 20)   # 20 x 24 KiB > 192 KiB, two live at a time
    plan = plan_columns(pb.program())
    assert plan is not None and len(set(plan.base.values())) <= 3
    a = np.random.default_rng(0).normal(size=(128, ROW)).astype(np.float32)
    want = a.copy()
    for i in range(1, 20):
        want = want * np.float32(2) + np.float32(i)
    np.testing.assert_array_equal(pb.run(a=a)["out"], want)


def test_a_program_that_fits_keeps_its_side_by_side_placement():
    pb = ProgramBuilder()
    chain(pb, 7)
    assert plan_columns(pb.program()) is None


def test_reading_a_shared_range_before_writing_it_is_still_uninitialised():
    pb = ProgramBuilder()
    chain(pb, 20, read_before_write=15)   # t15 reads itself: its bytes held t13
    plan = plan_columns(pb.program())
    assert plan is not None and any("t15" in names for names in plan.fresh.values())
    with pytest.raises(SimError, match=r"undefined data reaches HBM tensor 'out'.*first read "
                                       r"uninitialised at step15 .*'t15' element \[0, 0\]"):
        pb.run(a=np.ones((128, ROW), np.float32))


def test_too_much_live_at_once_names_the_instruction():
    pb = ProgramBuilder()
    pb.arg_in("a", (128, ROW))
    for i in range(9):   # nine 24 KiB tiles all read by the last instructions
        pb.tile(f"t{i}", (128, ROW))
        pb.load(f"t{i}", "a")
    pb.arg_out("out", (128, ROW))
    for i in range(9):
        pb.store("out", f"t{i}")
    with pytest.raises(SimError, match=r"instruction 8 'load-t8': the 9 SB locations live there need "
                                       r"221184 bytes per partition, more than 196608"):
        pb.run(a=np.ones((128, ROW), np.float32))


def test_psum_tiles_of_a_long_loop_share_psum():
    pb = ProgramBuilder()
    pb.arg_in("a", (128, 512))
    pb.tile("x", (128, 512))
    pb.load("x", "a")
    pb.tile("acc", (128, 512))
    pb.add(InstTensorScalarPtr("zero", EngineType.DVE, [pb.ap("x"), imm(0.0)], [pb.ap("acc")],
                               op0=AluOpType.mult))
    for i in range(12):   # 12 x 2 KiB PSUM tiles > 16 KiB, one live at a time
        p = pb.loc(f"p{i}", MemoryKind.PSUM, (128, 512))
        pb.add(InstTensorScalarPtr(f"ps{i}", EngineType.DVE, [pb.ap("x"), imm(float(i))], [pb.ap(p)],
                                   op0=AluOpType.add))
        pb.add(InstTensorScalarPtr(f"acc{i}", EngineType.DVE, [pb.ap(p), imm(0.5)], [pb.ap("acc")],
                                   op0=AluOpType.mult))
    pb.arg_out("out", (128, 512))
    pb.store("out", "acc")
    a = np.random.default_rng(1).normal(size=(128, 512)).astype(np.float32)
    np.testing.assert_array_equal(pb.run(a=a)["out"], (a + np.float32(11)) * np.float32(0.5))
