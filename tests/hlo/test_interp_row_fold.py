"""interp.row_fold: ordered row updates equal a plain left-to-right loop of the reducer's
elementwise op (elementwise.binary_op, which flushes subnormals as XLA CPU does), bit for
bit: f32 / f64 values around the no-flush bound, subnormal partial sums (the restart),
NaN / inf / signed zeros, integer wrap-around, and repeated, missing and single targets."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.hlo.interp.elementwise import binary_op
from tilecc.hlo.interp import row_fold
from tilecc.hlo.interp.row_fold import fold_rows
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import PrimitiveType as P

TINY32 = float(np.finfo(np.float32).tiny)


def reference(rows: np.ndarray, targets: np.ndarray, source: np.ndarray, picks: np.ndarray,
              op: Op, t: P) -> np.ndarray:
    fn = binary_op(op, t)
    out = rows.copy()
    for target, pick in zip(targets.tolist(), picks.tolist()):
        out[target] = fn(out[target], source[pick])
    return out


def values(kind: str, dtype: type, shape: tuple[int, ...], rng: np.random.Generator
           ) -> np.ndarray:
    if kind == "ints":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    x = rng.standard_normal(shape).astype(dtype)
    if kind == "at the bound":  # 2^23 smallest normals: the smallest value the fast path takes
        x = (np.sign(x) * np.float32(2.0 ** 23 * TINY32) * rng.integers(1, 4, shape)).astype(dtype)
    elif kind == "cancelling":  # sums of these fall below the smallest normal
        x = (rng.integers(-4, 5, shape) * np.float32(TINY32 / 3)).astype(dtype)
    elif kind == "special":
        for value, share in ((np.nan, 0.05), (np.inf, 0.05), (-np.inf, 0.05), (-0.0, 0.1)):
            x[rng.random(shape) < share] = value
    return x


@pytest.mark.parametrize("kind, dtype, t", [
    ("normal", np.float32, P.F32), ("at the bound", np.float32, P.F32),
    ("cancelling", np.float32, P.F32), ("special", np.float32, P.F32),
    ("normal", np.float64, P.F64), ("special", np.float64, P.F64),
    ("ints", np.int32, P.S32), ("ints", np.uint8, P.U8)])
@pytest.mark.parametrize("op", [Op.ADD, Op.MAXIMUM, Op.MINIMUM, Op.MULTIPLY])
def test_fold_rows_equals_the_sequential_loop(kind: str, dtype: type, t: P, op: Op) -> None:
    rng = np.random.default_rng(7)
    rows = values(kind, dtype, (9, 5), rng)
    source = values(kind, dtype, (60, 5), rng)
    targets = rng.integers(0, 8, 45)  # row 8 is never a target; most rows take several
    picks = rng.permutation(60)[:45]
    got = rows.copy()
    with np.errstate(all="ignore"):  # as the interpreter runs its steps
        want = reference(rows, targets, source, picks, op, t)
        fold_rows(got, targets, source, picks, op, t, binary_op(op, t))
    assert got.tobytes() == want.tobytes()


def test_no_update_and_one_update() -> None:
    rows = np.arange(6, dtype=np.float32).reshape(3, 2)
    fold_rows(rows, np.zeros(0, np.int64), rows, np.zeros(0, np.int64), Op.ADD, P.F32,
              binary_op(Op.ADD, P.F32))
    assert rows.tolist() == [[0, 1], [2, 3], [4, 5]]
    source = np.array([[TINY32 / 2, 1.0]], np.float32)  # a subnormal update is flushed
    fold_rows(rows, np.array([2]), source, np.array([0]), Op.ADD, P.F32,
              binary_op(Op.ADD, P.F32))
    assert rows.tolist() == [[0, 1], [2, 3], [4, 6]]


@pytest.mark.parametrize("op", [Op.ADD, Op.MAXIMUM, Op.MINIMUM])
def test_blocks_that_see_a_small_value_redo_only_themselves(monkeypatch: pytest.MonkeyPatch,
                                                            op: Op) -> None:
    """Two touched rows per block: the rows and updates of the even targets cancel below
    the smallest normal (their blocks are redone with the flushing op), the odd ones are
    standard normal (their blocks keep the plain ufunc); every block ends bit-exact."""
    monkeypatch.setattr(row_fold, "BLOCK_BYTES", 2 * 5 * 4)
    rng = np.random.default_rng(11)
    rows = values("normal", np.float32, (12, 5), rng)
    source = values("normal", np.float32, (80, 5), rng)
    targets = rng.integers(0, 12, 80)
    small = values("cancelling", np.float32, (80, 5), rng)
    source[targets % 2 == 0] = small[targets % 2 == 0]
    rows[::2] = values("cancelling", np.float32, (6, 5), rng)
    picks = np.arange(80)
    got = rows.copy()
    with np.errstate(all="ignore"):
        want = reference(rows, targets, source, picks, op, P.F32)
        fold_rows(got, targets, source, picks, op, P.F32, binary_op(op, P.F32))
    assert got.tobytes() == want.tobytes()
    assert np.count_nonzero(rows[::2] != want[::2]) > 0  # the cancelling rows did change


@pytest.mark.parametrize("block_bytes", [1, 2 * 5 * 4, 3 * 5 * 8])
@pytest.mark.parametrize("kind, dtype, t", [("normal", np.float64, P.F64),
                                            ("ints", np.int32, P.S32)])
def test_many_blocks_equal_the_sequential_loop(monkeypatch: pytest.MonkeyPatch,
                                               block_bytes: int, kind: str, dtype: type,
                                               t: P) -> None:
    """Blocks of one, two and three rows (a block under one row's size takes one row):
    every block takes exactly the rounds that reach its rows."""
    monkeypatch.setattr(row_fold, "BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(5)
    rows = values(kind, dtype, (10, 5), rng)
    source = values(kind, dtype, (70, 5), rng)
    targets = rng.integers(0, 9, 70) ** 2 % 9  # uneven: some rows take many updates
    picks = rng.permutation(70)
    got = rows.copy()
    with np.errstate(all="ignore"):
        want = reference(rows, targets, source, picks, Op.ADD, t)
        fold_rows(got, targets, source, picks, Op.ADD, t, binary_op(Op.ADD, t))
    assert got.tobytes() == want.tobytes()
