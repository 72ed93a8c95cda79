"""The random number generator of the simulated engines: Philox4x32-10, counter based.

Hardware bits (XORWOW on the Vector / GpSimd engines, NKI ISA pages nki.isa.rng,
nki.isa.rand2, nki.isa.set_rng_seed, nki.isa.rand_set_state) cannot be reproduced, so both
executors (the BIR simulator and the KLR interpreter) draw from this one documented
generator, which makes every run reproducible from its seed and gives both the same bits.
Philox4x32-10 is Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC 2011),
the Random123 reference (its known-answer vectors are checked by the tests).

State and counters, per engine (Vector, GpSimd) and per compute lane (partition) p:
- a lane's state is 6 uint32 words [key0, key1, ctr0, ctr1, ctr2, ctr3] (ctr0 lowest);
  `rand_get_state` / `rand_set_state` read and write exactly these 6 words per partition,
  for either engine (tilecc's layout, not XORWOW's 6 / 24 words);
- power-on and `set_rng_seed(s)` (Vector Engine; `nl.random_seed`): key = (s, p), counter
  0 for every lane p (power-on uses s = 0, and the GpSimd engine is seeded the same way);
- a draw of n values in lane p takes blocks counter, counter + 1, ... counter + B - 1 (B =
  ceil(n / 4), 128-bit increment with carry): block j gives words 4j .. 4j+3, value i is
  word i (the lane's elements in access order); the counter then advances by B;
- rng writes the low bits of each word (the destination's integer width); a uniform value
  is u = (word >> 8) * 2**-24 in [0, 1); rand2 writes min + (max - min) * u; dropout drops
  an element where u < rate (its KLR threshold type DropRate; KeepRate keeps where u <
  threshold), writing 0 there and the data elsewhere.
"""

from __future__ import annotations

import numpy as np

U32 = np.uint32
U64 = np.uint64
STATE_WORDS = 6
LANES = 128
ENGINES = ("dve", "pool")
_M0, _M1 = U64(0xD2511F53), U64(0xCD9E8D57)
_W0, _W1 = U32(0x9E3779B9), U32(0xBB67AE85)
_MASK = U64(0xFFFFFFFF)


def philox4x32_10(ctr: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Philox4x32-10 of counters ctr [..., 4] under keys key [..., 2] (uint32): [..., 4]."""
    c = [ctr[..., i].astype(U64) for i in range(4)]
    k0, k1 = key[..., 0].astype(U32), key[..., 1].astype(U32)
    for _ in range(10):
        p0, p1 = _M0 * c[0], _M1 * c[2]
        hi0, lo0 = p0 >> U64(32), p0 & _MASK
        hi1, lo1 = p1 >> U64(32), p1 & _MASK
        c = [hi1 ^ c[1] ^ k0.astype(U64), lo1, hi0 ^ c[3] ^ k1.astype(U64), lo0]
        with np.errstate(over="ignore"):
            k0, k1 = k0 + _W0, k1 + _W1
    return np.stack([x.astype(U32) for x in c], axis=-1)


def seeded(seed: int, lanes: int = LANES) -> np.ndarray:
    """The [lanes, 6] state after seeding with `seed`: key (seed, p), counter 0."""
    state = np.zeros((lanes, STATE_WORDS), U32)
    state[:, 0] = U32(seed & 0xFFFFFFFF)
    state[:, 1] = np.arange(lanes, dtype=U32)
    return state


def power_on() -> dict[str, np.ndarray]:
    """Each engine's [128, 6] lane states at power-on (seed 0), by KLR engine name."""
    return {engine: seeded(0) for engine in ENGINES}


def _add_counter(ctr: np.ndarray, add: np.ndarray) -> np.ndarray:
    """ctr [..., 4] + add (a 64-bit count) as a 128-bit number, word 0 lowest."""
    out = np.empty_like(ctr)
    carry = add.astype(U64)
    for i in range(4):
        total = ctr[..., i].astype(U64) + (carry & _MASK)
        out[..., i] = (total & _MASK).astype(U32)
        carry = (total >> U64(32)) + (carry >> U64(32))
    return out


def draw_words(state: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(words [lanes, count] uint32, the state after the draw) for the lanes of `state`."""
    lanes = state.shape[0]
    blocks = -(-count // 4)
    key = np.broadcast_to(state[:, None, 0:2], (lanes, blocks, 2))
    ctr = _add_counter(np.broadcast_to(state[:, None, 2:6], (lanes, blocks, 4)),
                       np.broadcast_to(np.arange(blocks, dtype=U64)[None, :], (lanes, blocks)))
    words = philox4x32_10(ctr, key).reshape(lanes, blocks * 4)[:, :count]
    after = state.copy()
    after[:, 2:6] = _add_counter(state[:, 2:6], np.full(lanes, blocks, U64))
    return words, after


def uniform(words: np.ndarray) -> np.ndarray:
    """float32 values in [0, 1): the top 24 bits of each word over 2**24 (exact in float32)."""
    return ((words >> U32(8)).astype(np.float32) * np.float32(2.0 ** -24)).astype(np.float32)


def low_bits(words: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The words truncated to an integer dtype's width, as that dtype's raw bits."""
    width = np.dtype(dtype).itemsize * 8
    unsigned = np.dtype(f"u{width // 8}")
    return (words & U32((1 << width) - 1)).astype(unsigned).view(dtype)
