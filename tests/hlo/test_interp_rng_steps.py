"""rng and rng-get-and-update-state (interp.rng_steps): the expander's keys and counters as
known answers, the counter's life (per instruction, per compiled module, per while trip,
per lane, 128-bit carry), refusals; against XLA CPU in a fresh child (keys depend on what
the child compiled before): every distribution and element type in one module, a while
loop, a called computation, repeated executions of one executable."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interp.rng_steps import INITIAL_STATE, expander_key, mt19937_64
from tilecc.hlo.interpreter import compile_module, evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.xla import XlaJob, run_many_on_xla

S = INITIAL_STATE


def _state_module(*deltas: int) -> str:
    lines = [f"  st{k} = u64[2] rng-get-and-update-state(), delta={d}"
             for k, d in enumerate(deltas)]
    shapes = ", ".join("u64[2]" for _ in deltas)
    names = ", ".join(f"st{k}" for k in range(len(deltas)))
    return (f"HloModule s\nENTRY e {{\n" + "\n".join(lines) +
            f"\n  ROOT t = ({shapes}) tuple({names})\n}}\n")


def _rng_module(cases: list[tuple[str, str, str, str, str]]) -> str:
    lines, shapes, names = [], [], []
    for k, (dist, t, dims, a, b) in enumerate(cases):
        lines += [f"  a{k} = {t}[] constant({a})", f"  b{k} = {t}[] constant({b})",
                  f"  r{k} = {t}[{dims}] rng(a{k}, b{k}), distribution={dist}"]
        shapes.append(f"{t}[{dims}]")
        names.append(f"r{k}")
    return ("HloModule many\nENTRY e {\n" + "\n".join(lines) + f"\n  ROOT t = "
            f"({', '.join(shapes)}) tuple({', '.join(names)})\n}}\n")


def _fresh_xla(text: str, repeats: int = 1) -> list[np.ndarray]:
    # run_many_on_xla starts a child of its own: this module is the first it compiles
    want = run_many_on_xla([XlaJob("run", text, [], 1, 1, repeats)])[0]
    assert isinstance(want, list), want
    return want


def test_mt19937_64_known_answers() -> None:
    # C++: std::mt19937_64's first output for the default seed 5489 (and the 10000th, which
    # the standard fixes), and for seed 42 (g++ 12)
    assert mt19937_64(5489, 1) == [14514284786278117030]
    assert mt19937_64(5489, 10000)[-1] == 9981545732273789042
    assert mt19937_64(42, 2) == [0xC151DF7D6EE5E2D6, 0xA3978FB9B92502A8]


def test_expander_keys_are_the_constants_xla_wrote() -> None:
    # read from XLA CPU's dump after its rng-expander pass (jaxlib 0.10.2): the first and
    # second rng of the first module a process compiles
    assert expander_key(0) == 13448155576104175439
    assert expander_key(1) == 5296180084612001234


def test_state_counters_per_instruction_per_compile_and_per_run() -> None:
    module = parse_module(_state_module(5, 7))
    first = [v.tolist() for v in evaluate_module(module, [], 1)]
    assert first == [[[S, 0]], [[S, 0]]]  # each instruction owns its counter
    assert [v.tolist() for v in evaluate_module(module, [], 1)] == first  # a new compile
    run = compile_module(module, 1)
    assert [v.tolist() for v in run([])] == first
    assert [v.tolist() for v in run([])] == [[[S + 5, 0]], [[S + 7, 0]]]


BIG = 2**63 - 1  # the largest delta XLA's parser takes (an int64)


def _words(value: int) -> list[int]:
    return [value & (2**64 - 1), value >> 64]


def test_state_lanes_take_consecutive_values_and_carry_into_the_high_word() -> None:
    run = compile_module(parse_module(_state_module(BIG)), 3)
    assert run([])[0].tolist() == [_words(S + k * BIG) for k in range(3)]
    assert run([])[0].tolist() == [_words(S + k * BIG) for k in range(3, 6)]
    assert run([])[0].tolist()[2] == [S - 8, 4]


@pytest.mark.parametrize("delta", ["9223372036854775808", "x", ""])
def test_state_delta_must_be_an_int64(delta: str) -> None:
    text = _state_module(1).replace(", delta=1", f", delta={delta}" if delta else "")
    with pytest.raises(InterpError, match="delta"):
        evaluate_module(parse_module(text), [], 1)


LOOP = """HloModule w
cond {
  p = (s32[], u64[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], u64[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  s = u64[2] rng-get-and-update-state(), delta=10
  acc = u64[2] get-tuple-element(p), index=1
  x = u64[2] xor(acc, s)
  ROOT t = (s32[], u64[2]) tuple(j, x)
}
ENTRY e {
  z = s32[] constant(0)
  a = u64[2] constant({0, 0})
  t = (s32[], u64[2]) tuple(z, a)
  w = (s32[], u64[2]) while(t), condition=cond, body=body
  ROOT r = u64[2] get-tuple-element(w), index=1
}
"""


def test_state_advances_on_every_while_trip() -> None:
    run = compile_module(parse_module(LOOP), 1)
    assert run([])[0].tolist() == [[S ^ (S + 10) ^ (S + 20), 0]]
    assert run([])[0].tolist() == [[(S + 30) ^ (S + 40) ^ (S + 50), 0]]


def test_rng_lanes_draw_what_successive_runs_draw() -> None:
    # lane d takes the counter plus d * delta: two devices at once draw what one device
    # draws in two runs of one compiled module
    module = parse_module(_rng_module([("rng_uniform", "f32", "5", "0", "1"),
                                       ("rng_normal", "f64", "3", "0", "1")]))
    both = evaluate_module(module, [], 2)
    run = compile_module(module, 1)
    first, second = run([]), run([])
    for k in range(2):
        np.testing.assert_array_equal(both[k], np.concatenate([first[k], second[k]]))
    assert not np.array_equal(first[0], second[0])


@pytest.mark.parametrize("dist, t, why", [
    ("rng_uniform", "s16", "rng_uniform of s16"), ("rng_uniform", "pred", "rng_uniform of pred"),
    ("rng_normal", "s32", "rng_normal of s32"), ("rng_poisson", "f32", "rng_poisson")])
def test_rng_refusals(dist: str, t: str, why: str) -> None:
    text = _rng_module([(dist, t, "4", "0", "1")])
    with pytest.raises(InterpError, match=why):
        evaluate_module(parse_module(text), [], 1)


def test_rng_uniform_int_corners() -> None:
    # b == a: the remainder by 0 is the bits themselves, added to a (wrapping);
    # b < a: the span wraps; s32 [0, 2^31 - 1) stays in range
    got = evaluate_module(parse_module(_rng_module([
        ("rng_uniform", "u32", "64", "3", "3"), ("rng_uniform", "s32", "64", "5", "-5"),
        ("rng_uniform", "s32", "64", "0", "2147483647")])), [], 1)
    assert len(np.unique(got[0])) > 32
    assert got[1].min() < -5 or got[1].max() > 5
    assert got[2].min() >= 0 and got[2].max() < 2**31 - 1
    empty = evaluate_module(parse_module(_rng_module([("rng_uniform", "f32", "0", "0", "1")])),
                            [], 2)
    assert empty[0].shape == (2, 0)


CASES = [("rng_uniform", "f32", "2,4,8", "0", "1"), ("rng_uniform", "f32", "64", "-3.7", "11.3"),
         ("rng_uniform", "f64", "64", "1e-3", "2.5"), ("rng_uniform", "f16", "6", "-1", "1"),
         ("rng_uniform", "bf16", "3,3", "0", "10"), ("rng_uniform", "s32", "4", "0", "2147483647"),
         ("rng_uniform", "s32", "9", "-50", "50"), ("rng_uniform", "u32", "5", "3", "3"),
         ("rng_uniform", "s32", "7", "5", "-5"),
         ("rng_uniform", "s64", "4", "-1000000000000", "1000000000000"),
         ("rng_uniform", "u64", "3", "0", "18446744073709551615"),
         ("rng_normal", "f32", "8", "0", "1"), ("rng_normal", "f32", "5", "2", "0.5"),
         ("rng_normal", "f32", "", "0", "1"), ("rng_normal", "f32", "3,5", "0", "1"),
         ("rng_normal", "f64", "4,3", "0.5", "2"), ("rng_normal", "f16", "6", "0", "1"),
         ("rng_normal", "bf16", "3", "1", "2")]


@pytest.mark.oracle
def test_rng_matches_xla_in_a_fresh_process() -> None:
    text = _rng_module(CASES)
    want = _fresh_xla(text)
    got = evaluate_module(parse_module(text), [], 1)
    for case, g, w in zip(CASES, got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, case
        if case[:2] == ("rng_normal", "f32"):
            # log / sin / cos: numpy's, not XLA CPU's f32 approximations
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, err_msg=str(case))
        else:
            assert np.array_equal(g.view(np.uint8), w.view(np.uint8)), case


CALLED = """HloModule c
draw {
  lo = f32[] parameter(0)
  hi = f32[] constant(4)
  ROOT r = f32[6] rng(lo, hi), distribution=rng_uniform
}
cond {
  p = (s32[], f32[6]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[6]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  acc = f32[6] get-tuple-element(p), index=1
  zero = f32[] constant(0)
  sigma = f32[] constant(1)
  n = f32[6] rng(zero, sigma), distribution=rng_normal
  x = f32[6] add(acc, n)
  ROOT t = (s32[], f32[6]) tuple(j, x)
}
ENTRY e {
  z = s32[] constant(0)
  lo = f32[] constant(-1)
  c = f32[6] call(lo), to_apply=draw
  s = s32[4] rng(z, z), distribution=rng_uniform
  t = (s32[], f32[6]) tuple(z, c)
  w = (s32[], f32[6]) while(t), condition=cond, body=body
  r = f32[6] get-tuple-element(w), index=1
  ROOT o = (f32[6], s32[4], f32[6]) tuple(c, s, r)
}
"""


@pytest.mark.oracle
def test_rng_in_called_computations_and_repeated_runs_match_xla() -> None:
    # keys follow the expansion order (computations in module order); the while body's
    # rng advances its counter on each trip; a second execution of one executable goes on
    want = _fresh_xla(CALLED, repeats=2)
    run = compile_module(parse_module(CALLED), 1)
    got = run([]) + run([])
    assert len(got) == len(want) == 6
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, err_msg=f"output {k}")
    assert not np.array_equal(got[0], got[3])


@pytest.mark.oracle
def test_state_counters_match_xla_over_repeated_runs() -> None:
    text = _state_module(5, BIG)
    want = _fresh_xla(text, repeats=3)
    run = compile_module(parse_module(text), 1)
    got = run([]) + run([]) + run([])
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
