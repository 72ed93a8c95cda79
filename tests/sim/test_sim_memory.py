"""Memory between runs (sim/memory.py): bytes an earlier run left read as zero and
unwritten, kernel inputs are read in place and stay untouched when the kernel writes them."""

from __future__ import annotations

import numpy as np
import pytest

from bir_builders import ProgramBuilder, imm
from tilecc.bir.enums import AluOpType as Op, EngineType
from tilecc.bir.inst import InstDMACopy, InstTensorScalarPtr
from tilecc.errors import SimError
from tilecc.sim.execute import simulate
from tilecc.sim.machine import Machine

DVE = EngineType.DVE
A = np.arange(24, dtype=np.float32).reshape(4, 6) + 1


def _scaled(columns: int, first_write: str = "whole") -> ProgramBuilder:
    """y = x * 2 with x loaded from a; `first_write` "half": only `columns` of y's 6
    columns are computed, and all of y is stored."""
    pb = ProgramBuilder()
    pb.arg_in("a", (4, 6))
    pb.tile("x", (4, 6))
    pb.tile("y", (4, 6))
    pb.arg_out("out", (4, 6))
    pb.load("x", "a")
    part = None if first_write == "whole" else [(1, columns)]
    pb.add(InstTensorScalarPtr("twice", DVE, [pb.ap("x", part), imm(2.0)], [pb.ap("y", part)],
                               op0=Op.mult))
    pb.store("out", "y")
    return pb


def test_a_whole_first_write_over_an_earlier_runs_bytes_is_all_that_is_read():
    m = Machine()
    for _ in range(2):
        np.testing.assert_array_equal(simulate(_scaled(6).program(), {"a": A}, machine=m)["out"], A * 2)


def test_a_partial_first_write_leaves_zeros_and_undefined_not_the_last_runs_values():
    """The first run leaves 2a in all of y; the second writes 3 columns of y and stores all
    6: the other 3 are undefined (reported, error policy) and zero (ignore policy)."""
    m = Machine()
    simulate(_scaled(6).program(), {"a": A}, machine=m)
    want = ("instructions[2] (store-out): store-out (DMACopy): undefined data reaches HBM tensor "
            "'out' element [0, 3]; first read uninitialised at store-out (DMACopy): 'y' element "
            "[0, 3] was never written")
    with pytest.raises(SimError) as err:
        simulate(_scaled(3, "half").program(), {"a": A}, machine=m)
    assert str(err.value) == want
    with pytest.raises(SimError) as err:   # the same as on a machine that never ran
        simulate(_scaled(3, "half").program(), {"a": A}, machine=Machine())
    assert str(err.value) == want
    out = simulate(_scaled(3, "half").program(), {"a": A}, machine=m, uninit="ignore")["out"]
    np.testing.assert_array_equal(out[:, :3], A[:, :3] * 2)
    np.testing.assert_array_equal(out[:, 3:], 0)


def test_an_output_nothing_writes_is_zero_after_a_run_that_wrote_it():
    m = Machine()
    simulate(_scaled(6).program(), {"a": A}, machine=m)
    pb = _scaled(6)
    pb.insts.pop()   # no store: out keeps the zeros HBM tensors start with
    np.testing.assert_array_equal(simulate(pb.program(), {"a": A}, machine=m)["out"], 0)


def test_an_input_the_kernel_writes_is_left_as_the_caller_gave_it():
    """a is input and output; the kernel doubles it in place (HBM -> SB -> HBM): the
    result is 2a, the caller's array is unchanged, and a second run (same layout, the
    views of the first kept) starts again from the caller's values."""
    pb = ProgramBuilder()
    pb.arg_in("a", (4, 6))
    pb.arg_out("a", (4, 6))
    pb.tile("x", (4, 6))
    pb.load("x", "a")
    pb.add(InstTensorScalarPtr("twice", DVE, [pb.ap("x"), imm(2.0)], [pb.ap("x")], op0=Op.mult))
    pb.add(InstDMACopy("back", EngineType.DMA, [pb.ap("x")], [pb.ap("a")]))
    m = Machine()
    a = A.copy()
    for _ in range(2):
        np.testing.assert_array_equal(simulate(pb.program(), {"a": a}, machine=m)["a"], A * 2)
        np.testing.assert_array_equal(a, A)


def test_a_new_input_array_is_read_not_the_last_runs():
    """Same program and layout, a different array of the same shape each run (and one
    that is not C-contiguous, which is copied in)."""
    m = Machine()
    prog = _scaled(6).program()
    for k in range(3):
        a = A + k
        np.testing.assert_array_equal(simulate(prog, {"a": a}, machine=m)["out"], a * 2)
    wide = np.zeros((4, 12), np.float32)
    wide[:, ::2] = A + 7
    np.testing.assert_array_equal(simulate(prog, {"a": wide[:, ::2]}, machine=m)["out"], (A + 7) * 2)
    np.testing.assert_array_equal(simulate(prog, {"a": A}, machine=m)["out"], A * 2)
