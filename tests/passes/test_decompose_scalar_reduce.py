"""DecomposeScalarReduce: golden rewrites, one no-change case per gate predicate, edge cases."""

from __future__ import annotations

import pytest

from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.passes.decompose_scalar_reduce import DecomposeScalarReduce

from .filecheck import filecheck
from .golden_io import golden_cases, run_pipeline

PASS = "decompose-scalar-reduce"
CASES = golden_cases("red_")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden(case) -> None:
    assert case.passes == [PASS]
    module, printed, changed = run_pipeline(case.text, case.passes)
    assert changed == [True]
    filecheck(printed, case.checks)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_second_run_changes_nothing(case) -> None:
    """The two new reduces fail the gate (operand rank 2 -> 1 and output rank 1)."""
    module, printed, _ = run_pipeline(case.text, case.passes)
    assert DecomposeScalarReduce().run(module) is False
    assert print_module(module) == printed


def _reduce_module(operand: str, out: str, dims: str, op: str = "maximum",
                   init: str = "0") -> str:
    et = operand.split("[")[0]
    return f"""HloModule m
red {{
  a = {et}[] parameter(0)
  b = {et}[] parameter(1)
  ROOT r = {et}[] {op}(a, b)
}}
ENTRY main {{
  p = {operand} parameter(0)
  init = {et}[] constant({init})
  ROOT out = {out} reduce(p, init), dimensions={{{dims}}}, to_apply=red
}}
"""


VARIADIC_REDUCE = """HloModule m
red {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ma = s32[] maximum(a, c)
  mb = s32[] minimum(b, d)
  ROOT r = (s32[], s32[]) tuple(ma, mb)
}
ENTRY main {
  p = s32[4,32] parameter(0)
  q = s32[4,32] parameter(1)
  zero = s32[] constant(0)
  ROOT out = (s32[], s32[]) reduce(p, q, zero, zero), dimensions={0,1}, to_apply=red
}
"""

NO_CHANGE = {
    # one case per gate predicate (spec 000, DecomposeScalarReduce gate)
    "add reducer (excluded)": _reduce_module("s32[4,32]", "s32[]", "0,1", op="add"),
    "u8 add reducer (excluded)": _reduce_module("u8[1,128]", "u8[1]", "1", op="add"),
    "f32 reduce (not integral)": _reduce_module("f32[4,32]", "f32[]", "0,1"),
    "bf16 reduce (not integral)": _reduce_module("bf16[4,32]", "bf16[]", "0,1"),
    "rank-3 operand": _reduce_module("s32[2,4,32]", "s32[]", "0,1,2"),
    "rank-1 operand": _reduce_module("s32[256]", "s32[]", "0"),
    "N = 200 (not a multiple of 128)": _reduce_module("s32[10,20]", "s32[]", "0,1"),
    "N = 64": _reduce_module("s16[8,8]", "s16[]", "0,1", op="minimum"),
    "non-scalar output": _reduce_module("s32[4,32]", "s32[4]{0}", "1"),
    "s32[1,2] output (true rank 1)": _reduce_module("s32[1,2,64]", "s32[1,2]{1,0}", "2"),
    "variadic reduce (tuple output)": VARIADIC_REDUCE,
}


@pytest.mark.parametrize("text", NO_CHANGE.values(), ids=NO_CHANGE.keys())
def test_no_change(text: str) -> None:
    before = print_module(parse_module(text))
    module, printed, changed = run_pipeline(text, [PASS])
    assert changed == [False]
    assert printed == before


@pytest.mark.parametrize("operand,dims,tiled", [
    ("s32[128,1]", "0,1", "s32[128,1]"),
    ("s32[1,128]", "1", "s32[128,1]"),
    ("u16[2,64]", "0,1", "u16[128,1]"),
    ("s8[1024,3]", "1,0", "s8[128,24]"),
])
def test_reshape_is_128_by_n_over_128(operand: str, dims: str, tiled: str) -> None:
    out = "s32[1]{0}" if dims == "1" else f"{operand.split('[')[0]}[]"
    text = _reduce_module(operand, out, dims, op="minimum")
    _, printed, changed = run_pipeline(text, [PASS])
    assert changed == [True]
    filecheck(printed, [("CHECK", f"= {tiled}{{1,0}} reshape(%p)")])


def test_pred_maximum_reducer_matches() -> None:
    """PRED counts as integral (spec 000 classifier: PRED special case)."""
    text = _reduce_module("pred[16,8]", "pred[]", "0,1", op="maximum", init="false")
    _, printed, changed = run_pipeline(text, [PASS])
    assert changed == [True]
    filecheck(printed, [
        ("CHECK", "%[[R1:[\\w.-]+]] = pred[128]{0} reduce(%[[RS:[\\w.-]+]], %init), "
                  "dimensions={1}, to_apply=%red"),
        ("CHECK-NEXT", "pred[128]{0} maximum(%[[R1]], %[[R1]])"),
    ])
