"""rng-bit-generator against XLA CPU, bit for bit: three_fry / philox / default, 2- and
3-word states (with a counter about to carry), scalar / odd / even / 3-d shapes, 8- to 64-bit
types, two replicas with different states, the form returning the bits alone; and jax's
rbg / unsafe_rbg programs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interp.rng import philox4x32, threefry2x32
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import XlaJob, run_many_on_xla

SHAPES = [("u32", (3, 5)), ("u32", ()), ("u32", (7,)), ("u32", (3, 4, 5)), ("u64", (5,)),
          ("u64", ()), ("u16", (6, 3)), ("u8", (9,)), ("s32", (2, 3)), ("f32", (4,)),
          ("u32", (5, 2, 3))]
CASES = [(alg, t, dims, words) for alg in ("rng_default", "rng_three_fry", "rng_philox")
         for t, dims in SHAPES for words in ((2,) if alg == "rng_three_fry" else (2, 3))]


def _module(alg: str, t: str, dims: tuple[int, ...], words: int) -> str:
    return (f"HloModule m\nENTRY e {{\n  s = u64[{words}] parameter(0)\n"
            f"  ROOT r = (u64[{words}], {t}[{','.join(map(str, dims))}]) "
            f"rng-bit-generator(s), algorithm={alg}\n}}\n")


def _states(words: int, seed: int) -> np.ndarray:
    states = np.random.default_rng(seed).integers(0, 2**63, (2, words), dtype=np.uint64) * 2
    states[1, -1] = np.uint64(2**64 - 2)  # the counter's low word carries
    return states


def test_threefry_and_philox_known_answers() -> None:
    # Random123's known-answer vectors (kat_vectors): threefry2x32_20 and philox4x32_10
    # with all-zero and all-ones inputs.
    zero = np.zeros(1, np.uint32)
    ones = np.full(1, 0xFFFFFFFF, np.uint32)
    assert [int(v[0]) for v in threefry2x32(zero, zero, zero, zero)] == [0x6B200159, 0x99BA4EFE]
    assert [int(v[0]) for v in threefry2x32(ones, ones, ones, ones)] == [0x1CB996FC, 0xBB002BE7]
    assert [int(v[0]) for v in philox4x32([zero] * 4, zero, zero)] == \
        [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


@pytest.mark.oracle
def test_rng_bit_generator_matches_xla_bit_for_bit() -> None:
    texts = [_module(*case) for case in CASES]
    states = [_states(case[3], k) for k, case in enumerate(CASES)]
    results = run_many_on_xla([XlaJob("run", text, [s], replicas=2)
                               for text, s in zip(texts, states)])
    for case, text, s, want in zip(CASES, texts, states, results):
        assert isinstance(want, list), (case, want)
        got = evaluate_module(parse_module(text), [s], 2)
        for g, w in zip(got, want):
            # XLA CPU hands s32 / f32 requests back as u32 buffers: the bits are compared
            assert g.dtype.itemsize == w.dtype.itemsize and g.shape == w.shape, case
            assert np.array_equal(np.asarray(g).view(np.uint8), w.view(np.uint8)), case
        assert not np.array_equal(got[1][0], got[1][1]) or not case[2], case


@pytest.mark.oracle
def test_rng_bit_generator_of_an_array_shape_gives_the_bits_alone() -> None:
    # XLA CPU runs the form without the state: the tuple form's bits
    tuple_text = _module("rng_default", "u32", (4, 8), 2)
    array_text = tuple_text.replace("(u64[2], u32[4,8])", "u32[4,8]")
    states = _states(2, 7)
    want = run_many_on_xla([XlaJob("run", t, [states], replicas=2)
                            for t in (array_text, tuple_text)])
    assert isinstance(want[0], list) and isinstance(want[1], list), want
    got = evaluate_module(parse_module(array_text), [states], 2)
    assert len(got) == 1 and np.array_equal(want[0][0], want[1][1])
    np.testing.assert_array_equal(got[0], want[0][0])


JAX_PROGRAM = """
import sys
import jax, jax.numpy as jnp
jax.config.update("jax_default_prng_impl", sys.argv[1])
def f(key):
    k = jax.random.wrap_key_data(key)
    a, b = jax.random.split(k)
    return (jax.random.normal(a, (4, 7)), jax.random.uniform(b, (3,), jnp.float32),
            jax.random.randint(a, (5,), -9, 9), jax.random.bits(b, (2, 3), jnp.uint16))
shape = jax.random.key_data(jax.random.key(0)).shape
print(jax.jit(f).lower(jnp.zeros(shape, jnp.uint32)).compiler_ir("hlo").as_hlo_text())
"""


@pytest.mark.oracle
@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_jax_rbg_programs_match_xla(impl: str, tmp_path) -> None:
    script = tmp_path / "program.py"
    script.write_text(JAX_PROGRAM)
    text = subprocess.run([sys.executable, str(script), impl], check=True,
                          capture_output=True, text=True).stdout
    assert "rng-bit-generator" in text
    module = parse_module(text)
    inputs = random_inputs(module, 1, 3)
    want = run_many_on_xla([XlaJob("run", text, inputs)])[0]
    assert isinstance(want, list), want
    got = evaluate_module(module, inputs, 1)
    normal, uniform, ints, bits = got
    # the bits and the integers drawn from them are exact; normal goes through erf_inv,
    # whose f32 polynomial the interpreter evaluates in another order (a few ulp)
    np.testing.assert_array_equal(bits, want[3])
    np.testing.assert_array_equal(ints, want[2])
    np.testing.assert_array_equal(uniform, want[1])
    np.testing.assert_allclose(normal, want[0], rtol=1e-5, atol=1e-6)


def test_unknown_algorithm_is_refused() -> None:
    text = _module("rng_default", "u32", (2,), 2).replace("rng_default", "rng_mystery")
    with pytest.raises(InterpError, match="rng_mystery"):
        evaluate_module(parse_module(text), [_states(2, 0)[:1]], 1)
