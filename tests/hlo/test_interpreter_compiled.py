"""The compiled form of the interpreter: programs built once and reused, failures raised only
by instructions that run, no stale program after a module changes, and the shortcuts that
skip copies (uniform lane selection, one-group all-reduce) returning the right values."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interp.values import select_lanes
from tilecc.hlo.interpreter import compile_module, evaluate_module
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module

ADD = "add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT c = s32[] add(a, b)\n}\n"

BRANCHY = """HloModule b, replica_count=2

fine {
  p = s32[3] parameter(0)
  ROOT n = s32[3] negate(p)
}

refused {
  p = s32[3] parameter(0)
  ROOT c = s32[3] custom-call(p), custom_call_target="Frobnicate"
}

ENTRY e {
  which = s32[] parameter(0)
  x = s32[3] parameter(1)
  ROOT r = s32[3] conditional(which, x, x), branch_computations={fine, refused}
}
"""


def test_compiled_module_runs_repeatedly_with_fresh_inputs() -> None:
    module = parse_module(f"HloModule m, replica_count=4\n{ADD}ENTRY e {{\n"
                          "  p = s32[2] parameter(0)\n"
                          "  s = s32[2] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add\n"
                          "  ROOT m = s32[2] multiply(s, p)\n}\n")
    run = compile_module(module, 4)
    for seed in range(3):
        x = np.random.default_rng(seed).integers(-2**31, 2**31, (4, 2)).astype(np.int32)
        (got,) = run([x])
        pair_sums = np.repeat(x[0::2] + x[1::2], 2, axis=0)  # wraps like s32
        np.testing.assert_array_equal(got, pair_sums * x)
        np.testing.assert_array_equal(got, evaluate_module(module, [x], 4)[0])


def test_an_unsupported_branch_fails_only_when_taken() -> None:
    module = parse_module(BRANCHY)
    x = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
    (got,) = evaluate_module(module, [np.array([0, 0], np.int32), x], 2)
    np.testing.assert_array_equal(got, -x)
    with pytest.raises(InterpError, match="custom-call is not supported"):
        evaluate_module(module, [np.array([0, 1], np.int32), x], 2)


def test_evaluate_module_sees_a_module_changed_in_place() -> None:
    module = parse_module("HloModule c\nENTRY e {\n  x = s32[3] parameter(0)\n"
                          "  ROOT n = s32[3] negate(x)\n}\n")
    x = np.array([[1, -2, 2**31 - 1]], np.int32)
    np.testing.assert_array_equal(evaluate_module(module, [x], 1)[0], -x)
    entry = module.entry
    assert entry is not None
    old_root = entry.root
    assert old_root is not None
    param = entry.parameters[0]
    double = entry.add_instruction(HloInstruction.create(HloOpcode.ADD, param.shape,
                                                         [param, param], name="double"))
    entry.replace_instruction(old_root, double)
    np.testing.assert_array_equal(evaluate_module(module, [x], 1)[0], x + x)


def test_uniform_lane_selection_returns_that_side() -> None:
    on_true, on_false = np.arange(6).reshape(3, 2), -np.arange(6).reshape(3, 2)
    assert select_lanes(np.array([True, True, True]), on_true, on_false) is on_true
    assert select_lanes(np.array([False, False, False]), on_true, on_false) is on_false
    mixed = select_lanes(np.array([True, False, True]), (on_true,), (on_false,))
    np.testing.assert_array_equal(mixed[0], [[0, 1], [-2, -3], [4, 5]])


def test_while_with_diverging_lanes_keeps_each_lanes_state() -> None:
    module = parse_module("""HloModule w, replica_count=3

cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(next, n)
}

ENTRY e {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  start = (s32[], s32[]) tuple(zero, n)
  loop = (s32[], s32[]) while(start), condition=cond, body=body
  ROOT i = s32[] get-tuple-element(loop), index=0
}
""")
    (got,) = evaluate_module(module, [np.array([0, 5, -3], np.int32)], 3)
    np.testing.assert_array_equal(got, [0, 5, 0])


def test_one_group_all_reduce_is_shared_and_read_only() -> None:
    module = parse_module(f"HloModule a, replica_count=4\n{ADD}ENTRY e {{\n"
                          "  p = s32[2] parameter(0)\n"
                          "  ROOT s = s32[2] all-reduce(p), replica_groups={}, to_apply=add\n}\n")
    x = np.array([[2**31 - 1, 1], [1, 2], [5, 3], [-2, 4]], np.int32)
    (got,) = evaluate_module(module, [x], 4)
    np.testing.assert_array_equal(got, [[-2**31 + 3, 10]] * 4)  # wrapped
    assert not got.flags.writeable
