"""The default definedness rule (tilecc/definedness.py `spread`) and the operand-layer hooks an
executor uses: registers, a declared rule, values used as indices."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.bir.enums import BirDtype, EngineType, MemoryKind
from tilecc.bir.inst import AccessPattern, InstMemset, MemoryLocation
from tilecc.definedness import spread
from tilecc.errors import SimError
from tilecc.sim import operands
from tilecc.sim.machine import Machine

F32 = BirDtype.float32


def test_elementwise_reads_map_element_to_element():
    u = np.array([[False, True], [True, False]])
    np.testing.assert_array_equal(spread(u, (2, 2)), u)
    np.testing.assert_array_equal(spread(u, (4,)), u.reshape(4))   # a copy between layouts


def test_a_column_operand_reaches_its_whole_row():
    np.testing.assert_array_equal(spread(np.array([[True], [False]]), (2, 3)),
                                  [[True] * 3, [False] * 3])


def test_row_reductions_fold_trailing_elements():
    u = np.zeros((2, 6), bool)
    u[1, 4] = True
    np.testing.assert_array_equal(spread(u, (2, 1)), [[False], [True]])
    np.testing.assert_array_equal(spread(u, (2, 3)), [[False] * 3, [False, False, True]])
    np.testing.assert_array_equal(spread(u, (2, 4)), [[False] * 4, [True] * 4])   # 4 does not divide 6


def test_partition_reductions_fold_columns_and_other_shapes_fold_everything():
    u = np.zeros((4, 3), bool)
    u[2, 1] = True
    np.testing.assert_array_equal(spread(u, (1, 3)), [[False, True, False]])
    assert spread(u, (5, 7)).all() and not spread(np.zeros((4, 3), bool), (5, 7)).any()


def _machine():
    m = Machine()
    m.place(MemoryLocation("t", MemoryKind.SB, F32, 4, 16))
    m.place(MemoryLocation("h", MemoryKind.HBM, F32, 4, 16))
    return m


T = AccessPattern("t", F32, 0, ((4, 4), (1, 4)))
T_COL = AccessPattern("t", F32, 0, ((4, 4), (1, 1)))
H = AccessPattern("h", F32, 0, ((4, 4), (1, 4)))


def _run(m, body):
    m.begin(InstMemset("step", EngineType.DVE, [], []))
    body()
    m.finish()


def test_accumulator_registers_carry_definedness_to_their_drain():
    m = _machine()
    _run(m, lambda: operands.write_registers(m, m.dve_acc, slice(0, 4),
                                             operands.read(m, T, "src").sum(axis=1)))
    with pytest.raises(SimError, match=r"HBM tensor 'h' element \[0, 0\]; first read uninitialised "
                                       r"at step \(Memset\): 't' element \[0, 0\]"):
        _run(m, lambda: operands.write(m, H, np.broadcast_to(
            operands.read_registers(m, m.dve_acc, slice(0, 4)).reshape(-1, 1), (4, 4))))


def test_a_declared_rule_replaces_the_default(capsys):
    m = _machine()
    m.uninit = "warn"

    def body():
        values = operands.read(m, T, "src")          # all undefined
        operands.write(m, H, values, undefined=np.zeros((4, 4), bool))   # e.g. a select
    _run(m, body)
    assert m.placement("h").written.min() == 0xFF and capsys.readouterr().err == ""


def test_undefined_values_used_as_an_index_are_reported():
    m = _machine()
    with pytest.raises(SimError, match=r"undefined data used as a gather index: 't' element \[0, 0\] "
                                       r"was never written"):
        _run(m, lambda: operands.read_index(m, T_COL, "a gather index"))
