"""interp.flushed: which values the float ops may skip flushing (not a dot accumulated in a
wider type), and that skipping it keeps XLA CPU's results (subnormal parameters and
constants still flush where they enter)."""

from __future__ import annotations

import numpy as np

from tilecc.hlo.interp.flushed import known_flushed
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module

TINY = float(np.finfo(np.float32).tiny)

MODULE = """HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f64[4] parameter(1)
  sub = f32[4] constant({1e-39, 0, 2, -3})
  plain = f32[4] constant({0, -0, 1e-30, inf})
  e = f32[4] exponential(p)
  moved = f32[2,2] reshape(e)
  back = f32[4] reshape(moved)
  neg = f32[4] negate(back)
  sum = f32[4] add(neg, p)
  wide = f64[4] convert(p)
  dq = f32[] dot(q, wide), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  df = f32[] dot(p, e), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  mixed = f32[4] add(sub, plain)
  kept = f32[4] add(sub, e)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(sum, mixed, kept)
}
"""


def test_which_values_are_known_flushed() -> None:
    entry = parse_module(MODULE).entry
    assert entry is not None
    known = {inst.name: known_flushed(inst) for inst in entry.instructions}
    assert {name for name, flag in known.items() if flag} == \
        {"plain", "e", "moved", "back", "neg", "sum", "df", "mixed", "kept"}


def test_subnormal_operands_still_flush() -> None:
    p = np.array([[TINY / 4, -TINY / 2, 0.0, 1.0]], np.float32)
    q = np.ones((1, 4), np.float64)
    with np.errstate(all="ignore"):
        total, mixed, kept = evaluate_module(parse_module(MODULE), [p, q], 1)
    flushed_p = np.where(np.abs(p) < TINY, np.copysign(0, p), p).astype(np.float32)
    assert total.tolist() == (-np.exp(flushed_p) + flushed_p).tolist()
    assert mixed.tolist() == [[0.0, 0.0, 2.0, np.inf]]  # 1e-39 flushed, 1e-30 kept
    assert kept.tolist() == (np.array([[0, 0, 2, -3]], np.float32) +
                             np.exp(flushed_p)).tolist()
