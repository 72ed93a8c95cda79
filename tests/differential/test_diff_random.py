"""Random numbers (Philox4x32-10, tilecc/counter_rng.py) and nl.device_print: known-answer
vectors, the same bits on both executors, reproducibility from the seed, a distribution
test with a fixed seed, dropout dropping exactly where its draws say, printing in program
order with the kernel line."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from diff_kernels import assert_agree
from nki_both import both, load, new, store
from tilecc import counter_rng
from tilecc.hlo.interp.rng import philox4x32
from tilecc.nki.errors import KernelError

U32 = np.uint32


@pytest.mark.parametrize("ctr, key, want", [
    ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
])
def test_philox_known_answers_and_the_hlo_interpreter_agree(ctr, key, want):
    got = counter_rng.philox4x32_10(np.array(ctr, U32), np.array(key, U32))
    np.testing.assert_array_equal(got, np.array(want, U32))
    words = [np.array([c], U32) for c in ctr]
    other = philox4x32(words, np.array([key[0]], U32), np.array([key[1]], U32))
    np.testing.assert_array_equal(np.concatenate(other), got)


def test_counter_carries_into_the_next_word():
    state = counter_rng.seeded(7, lanes=1)
    state[0, 2] = 0xFFFFFFFF
    _, after = counter_rng.draw_words(state, 9)  # 3 blocks
    np.testing.assert_array_equal(after[0, 2:], [2, 1, 0, 0])


def rng_kernel(seed):
    def kernel(s):
        seed_tile = load(s)
        nisa.set_rng_seed(seed_tile)
        bits = new((64, 40), nl.uint32)
        nisa.rng(dst=bits)
        small = new((64, 10), nl.int8)
        nisa.rng(dst=small, engine=nisa.gpsimd_engine)
        state = new((64, 6), nl.uint32)
        nisa.rand_get_state(dst=state, engine=nisa.vector_engine)
        return store(bits), store(small), store(state)
    return both(kernel, np.array([[seed]], U32))


def test_rng_bits_are_the_documented_draws_on_both_executors():
    sim, ref = rng_kernel(1234)
    assert_agree(sim, ref)
    words, after = counter_rng.draw_words(counter_rng.seeded(1234, 64), 40)
    np.testing.assert_array_equal(sim[0], words)
    np.testing.assert_array_equal(sim[2], after)
    pool = counter_rng.draw_words(counter_rng.seeded(0, 64), 10)[0]  # GpSimd: never seeded
    np.testing.assert_array_equal(sim[1], (pool & 0xFF).astype(np.uint8).view(np.int8))


def test_runs_reproduce_from_their_seed():
    first, again, other = rng_kernel(99)[0], rng_kernel(99)[0], rng_kernel(100)[0]
    np.testing.assert_array_equal(first[0], again[0])
    assert (first[0] != other[0]).mean() > 0.99


def test_set_state_then_draw():
    def kernel(s):
        nisa.rand_set_state(load(s), engine=nisa.gpsimd_engine)
        bits = new((16, 7), nl.uint16)
        nisa.rng(dst=bits, engine=nisa.gpsimd_engine)
        return store(bits)

    state = np.random.default_rng(3).integers(0, 2 ** 32, (16, 6), dtype=np.uint64).astype(U32)
    sim, ref = both(kernel, state)
    assert_agree(sim, ref)
    words = counter_rng.draw_words(state, 7)[0]
    np.testing.assert_array_equal(sim[0], (words & 0xFFFF).astype(np.uint16))


def test_nl_rand_is_uniform_kolmogorov_smirnov():
    def kernel(s):
        nl.random_seed(load(s))
        return store(nl.rand((128, 512), dtype=nl.float32))

    sim, ref = both(kernel, np.array([[42]], np.int32))
    assert_agree(sim, ref, exact=True)
    u = np.sort(sim[0].reshape(-1).astype(np.float64))
    n = u.size
    assert u.min() >= 0.0 and u.max() < 1.0
    cdf = np.arange(1, n + 1) / n
    d = max(np.max(cdf - u), np.max(u - (cdf - 1.0 / n)))
    # the alpha = 0.001 critical value of the one-sample KS statistic: 1.95 / sqrt(n)
    assert d < 1.95 / np.sqrt(n)
    assert abs(u.mean() - 0.5) < 4.5 * np.sqrt(1 / 12 / n)


def test_random_seed_number_and_same_seed_same_values():
    def kernel(a):
        nl.random_seed(42)
        first = nl.rand((8, 16), dtype=nl.float32)
        nl.random_seed(42)
        second = nl.rand((8, 16), dtype=nl.float32)
        return store(first), store(second)

    sim, ref = both(kernel, np.zeros((1, 1), np.float32))
    assert_agree(sim, ref, exact=True)
    np.testing.assert_array_equal(sim[0], sim[1])


@pytest.mark.parametrize("rate", [0.0, 0.3, 1.0])
def test_dropout_drops_exactly_where_its_draws_say(rate):
    def kernel(a):
        x = load(a)
        state = new((a.shape[0], 6), nl.uint32)
        nisa.rand_get_state(dst=state, engine=nisa.vector_engine)
        out = nisa.dropout(x, rate)
        return store(out), store(state)

    a = np.random.default_rng(8).normal(0, 1, (128, 256)).astype(np.float32) + 10.0
    sim, ref = both(kernel, a)
    assert_agree(sim, ref, exact=True)
    u = counter_rng.uniform(counter_rng.draw_words(sim[1], 256)[0])
    np.testing.assert_array_equal(sim[0], np.where(u < rate, 0.0, a))
    dropped = (sim[0] == 0).mean()
    assert abs(dropped - rate) < 5 * np.sqrt(rate * (1 - rate) / a.size) + 1e-12


def test_dropout_per_partition_rate_and_rand2_bounds():
    def kernel(a, p, lo, hi):
        x = load(a)
        out = new(a.shape)
        nisa.dropout(dst=out, data=x, prob=load(p))
        r = new(a.shape)
        nisa.rand2(dst=r, min=load(lo), max=load(hi))
        return store(out), store(r)

    a = np.ones((4, 4096), np.float32)
    p = np.array([[0.0], [0.25], [0.75], [1.0]], np.float32)
    lo, hi = np.array([[-3.0], [0.0], [5.0], [1.0]], np.float32), np.array([[-1.0], [1.0], [6.0], [9.0]], np.float32)
    sim, ref = both(kernel, a, p, lo, hi)
    assert_agree(sim, ref, exact=True)
    dropped = (sim[0] == 0).mean(axis=1)
    assert dropped[0] == 0.0 and dropped[3] == 1.0 and abs(dropped[1] - 0.25) < 0.04
    assert ((sim[1] >= lo) & (sim[1] < hi)).all()


@pytest.mark.parametrize("call, message", [
    (lambda x: nisa.rng(dst=new((4, 4))), "integer type"),
    (lambda x: nisa.rng(dst=nl.ndarray((4, 4), dtype=nl.uint8, buffer=nl.psum), engine=nisa.gpsimd_engine),
     "SBUF"),
    (lambda x: nisa.rand2(dst=new((4, 4)), min=2.0, max=1.0), "less than max"),
    (lambda x: nisa.dropout(dst=new((4, 4)), data=x, prob=1.5), r"\[0, 1\]"),
    (lambda x: nisa.rand_get_state(dst=new((4, 24), nl.uint32)), "6 words"),
    (lambda x: nisa.set_rng_seed(x), r"\[1, 1\]"),
    (lambda x: nl.random_seed(0.5), "32-bit integer"),
])
def test_random_refusals(call, message):
    def kernel(a):
        x = load(a)
        call(x)
        return store(x)

    with pytest.raises(KernelError, match=message):
        nki.simulate(kernel)(np.zeros((4, 4), np.float32))


def test_device_print_in_program_order_with_the_kernel_line(capfd):
    def kernel(a):
        x = load(a)
        nl.device_print("first", x)
        y = nl.multiply(x, 2.0)
        nl.device_print("second", y)
        return store(y)

    lines, start = inspect.getsourcelines(kernel)
    first = start + next(i for i, line in enumerate(lines) if '"first"' in line)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for backend in ("bir", "klr"):
        nki.simulate(kernel, backend=backend)(a)
        err = capfd.readouterr().err
        assert f"{__file__}:{first}: first " in err and f"{__file__}:{first + 2}: second " in err
        assert err.index("first") < err.index("second")
        assert "[2, 3] float32" in err and "[[ 0.  2.  4.]" in err


def test_device_print_of_an_hbm_argument_and_a_slice_starting_anywhere(capfd):
    def kernel(a):
        nl.device_print("arg", a)
        x = load(a)
        nl.device_print("rows", x[1:3, :])
        return store(x)

    a = np.arange(8, dtype=np.float32).reshape(4, 2)
    for backend in ("bir", "klr"):
        nki.simulate(kernel, backend=backend)(a)
        err = capfd.readouterr().err
        assert "arg a [4, 2] float32" in err and "[2, 2] float32\n[[2. 3.]\n [4. 5.]]" in err
