"""Buffer reuse in the interpreter (values.dead_array, values.Recycler): a step writes into
an operand's buffer only when no one else can see it, and a recycled result is never one
the caller still holds. Every case checks the values against numpy and that inputs and
earlier outputs are unchanged."""

from __future__ import annotations

import numpy as np

from tilecc.hlo.interp.values import DEAD_ARRAY_BYTES, Recycler, dead_array
from tilecc.hlo.interpreter import compile_module, evaluate_module
from tilecc.hlo.parser import parse_module

ADD = "add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT c = s32[] add(a, b)\n}\n"

LOOP = """HloModule loop, replica_count=2
cond {
  p = (s32[], s32[64,1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[64,1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = s32[64,1024] get-tuple-element(p), index=1
  three = s32[] constant(-1640531535)
  threes = s32[64,1024] broadcast(three), dimensions={}
  scaled = s32[64,1024] multiply(x, threes)
  y = s32[64,1024] xor(scaled, x)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], s32[64,1024]) tuple(next, y)
}
ENTRY e {
  x = s32[64,1024] parameter(0)
  zero = s32[] constant(0)
  start = (s32[], s32[64,1024]) tuple(zero, x)
  loop = (s32[], s32[64,1024]) while(start), condition=cond, body=body
  ROOT r = s32[64,1024] get-tuple-element(loop), index=1
}
"""


def _loop_reference(x: np.ndarray) -> np.ndarray:
    for _ in range(5):
        x = (x * np.int32(-1640531535)) ^ x  # wraps like s32
    return x


def test_dead_array_only_when_the_list_is_the_one_holder() -> None:
    big = DEAD_ARRAY_BYTES // 8
    a = [np.zeros(big), np.zeros(4), np.broadcast_to(np.zeros(1), (big,))]
    assert dead_array(a, 0)
    assert not dead_array(a, 1)  # small: not worth reusing
    assert not dead_array(a, 2)  # a view: its memory is another array's
    kept = a[0]
    assert not dead_array(a, 0)
    del kept
    view = a[0][1:]
    assert not dead_array(a, 0)  # the view's base holds it
    del view
    twice = [a[0], a[0]]
    assert not dead_array(twice, 0)


def test_recycler_gives_back_only_a_dead_buffer() -> None:
    recycler = Recycler()
    shape, dtype = (DEAD_ARRAY_BYTES,), np.dtype(np.uint8)
    first = recycler.take(shape, dtype)
    assert recycler.take(shape, dtype) is not first  # `first` is alive
    second_id = id(recycler.last)
    assert id(recycler.take(shape, dtype)) == second_id  # nothing held the second one
    assert recycler.take((DEAD_ARRAY_BYTES, 2), dtype).shape == (DEAD_ARRAY_BYTES, 2)


def test_while_state_reused_in_place_gives_numpy_result_and_keeps_the_input() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(-2**31, 2**31, size=(2, 64, 1024), dtype=np.int64).astype(np.int32)
    x[0, 0, :4] = [np.iinfo(np.int32).min, -1, 0, np.iinfo(np.int32).max]
    before = x.copy()
    (got,) = evaluate_module(parse_module(LOOP), [x], 2)
    np.testing.assert_array_equal(got, _loop_reference(before))
    np.testing.assert_array_equal(x, before)


def test_value_used_later_is_not_overwritten() -> None:
    text = """HloModule m
ENTRY e {
  x = f32[128,256] parameter(0)
  two = f32[] constant(2)
  twos = f32[128,256] broadcast(two), dimensions={}
  scaled = f32[128,256] multiply(x, twos)
  y = f32[128,256] add(scaled, scaled)
  z = f32[128,256] subtract(y, x)
  w = f32[128,256] multiply(z, z)
  ROOT t = (f32[128,256], f32[128,256], f32[128,256]) tuple(scaled, z, w)
}
"""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 128, 256)).astype(np.float32)
    x[0, 0, :3] = [1e-39, -1e-39, np.nan]  # subnormals flush to signed zero, as on XLA CPU
    scaled, z, w = evaluate_module(parse_module(text), [x], 1)
    flushed = np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(0, x), x)
    want_scaled = flushed * 2
    want_z = want_scaled + want_scaled - flushed
    np.testing.assert_array_equal(scaled, want_scaled)
    np.testing.assert_array_equal(z, want_z)
    np.testing.assert_array_equal(w, want_z * want_z)
    assert np.signbit(scaled[0, 0, 1]) and scaled[0, 0, 1] == 0


def test_recycled_all_reduce_result_never_overwrites_a_kept_output() -> None:
    text = f"""HloModule pairs, replica_count=4
{ADD}
ENTRY e {{
  p = s32[256,1024] parameter(0)
  ROOT r = s32[256,1024] all-reduce(p), replica_groups={{{{0,1}},{{2,3}}}}, to_apply=add
}}
"""
    compiled = compile_module(parse_module(text), 4)
    rng = np.random.default_rng(5)
    inputs = [rng.integers(-2**31, 2**31, size=(4, 256, 1024), dtype=np.int64).astype(np.int32)
              for _ in range(3)]
    kept = compiled([inputs[0]])[0]
    compiled([inputs[1]])  # dropped: its buffer may serve the next run
    last = compiled([inputs[2]])[0]
    for out, x in ((kept, inputs[0]), (last, inputs[2])):
        sums = (x[0::2] + x[1::2]).repeat(2, axis=0)
        np.testing.assert_array_equal(out, sums)
    assert not np.shares_memory(kept, last)
