"""rng-bit-generator as XLA CPU computes it: ThreeFry2x32 and Philox4x32, bit for bit.

Contract: `rng_bit_generator(algorithm, state, dims, dtype)` takes the state operand as
(B, n) uint64 (n = 2 for three_fry, 2 or 3 for philox) and returns (new state (B, n),
bits (B, *dims) viewed as `dtype`, an 8 / 16 / 32 / 64-bit type). rng_default is
Philox on XLA CPU. The layout follows XLA's RngBitGeneratorExpander and its prng library
(xla/service/rng_bit_generator_expander.cc, xla/hlo/builder/lib/prng.cc), checked against
XLA CPU on several shapes and widths:
- state[0] is the key (its low and high 32 bits are the two key words) and stays.
- three_fry: counter state[1]. 64-bit values: element i (row-major) is ThreeFry2x32 of the
  counter + i, low word | high word << 32. 32-bit values: the shape is halved along its
  first even dimension (else its longest; a scalar makes one pair), each half element k
  gives two words that land at positions 2k and 2k + 1 of that dimension (an odd size
  drops the last). Narrower values are the low bits of the 32-bit ones. The counter
  advances by the number of (half) elements generated.
- philox: a 128-bit counter, (state[1], state[2]) low word first with 3 state words, and
  (state[1], state[0]) with 2 (XLA reverses the state). Block j (counter + j) gives four
  32-bit words, elements 4j .. 4j + 3; 64-bit values pair words (0, 1) and (2, 3). The
  counter advances by the number of blocks; with 2 state words only its low 64 bits are
  written back.
The bits are returned as the requested type; XLA CPU itself hands an s32 / f32 request
back in a u32 buffer holding the same bits.
"""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpError

Array = np.ndarray
_U32 = np.uint32
_M32 = np.uint64(0xFFFFFFFF)
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)


def _low_high(x: Array) -> tuple[Array, Array]:
    return (x & _M32).astype(_U32), (x >> np.uint64(32)).astype(_U32)


def _rotate_left(v: Array, distance: int) -> Array:
    return (v << _U32(distance)) | (v >> _U32(32 - distance))


def threefry2x32(x0: Array, x1: Array, k0: Array, k1: Array) -> tuple[Array, Array]:
    """20 rounds of ThreeFry2x32 (Salmon et al., SC 2011) on uint32 words."""
    k2 = _U32(0x1BD11BDA) ^ k0 ^ k1
    keys = (k0, k1, k2)
    x0, x1 = x0 + k0, x1 + k1
    for block in range(5):
        for rotation in _ROTATIONS[4 * (block % 2):4 * (block % 2) + 4]:
            x0 = x0 + x1
            x1 = _rotate_left(x1, rotation) ^ x0
        x0 = x0 + keys[(block + 1) % 3]
        x1 = x1 + keys[(block + 2) % 3] + _U32(block + 1)
    return x0, x1


def philox4x32(words: list[Array], k0: Array, k1: Array) -> list[Array]:
    """10 rounds of Philox4x32 on uint32 words."""
    x = list(words)
    for _ in range(10):
        p0 = x[0].astype(np.uint64) * np.uint64(0xD2511F53)
        p1 = x[2].astype(np.uint64) * np.uint64(0xCD9E8D57)
        lo0, hi0 = _low_high(p0)
        lo1, hi1 = _low_high(p1)
        x = [hi1 ^ x[1] ^ k0, lo1, hi0 ^ x[3] ^ k1, lo0]
        k0, k1 = k0 + _U32(0x9E3779B9), k1 + _U32(0xBB67AE85)
    return x


def half_shape(dims: tuple[int, ...]) -> tuple[int, int]:
    """(split dimension, its halved size) of XLA's SplitShapeIntoHalves; (-1, 1) for a scalar."""
    if not dims:
        return -1, 1
    even = [i for i, d in enumerate(dims) if d % 2 == 0]
    split = even[0] if even else max(range(len(dims)), key=lambda i: (dims[i], -i))
    return split, -(-dims[split] // 2)


def _threefry(state: Array, dims: tuple[int, ...], bits: int) -> tuple[Array, Array]:
    lanes = state.shape[0]
    k0, k1 = (w[:, None] for w in _low_high(state[:, 0]))
    count = int(np.prod(dims, dtype=np.int64))
    if bits == 64:
        counters = state[:, 1:2] + np.arange(count, dtype=np.uint64)
        x0, x1 = threefry2x32(*_low_high(counters), k0, k1)
        values = x0.astype(np.uint64) | (x1.astype(np.uint64) << np.uint64(32))
        return state[:, 1] + np.uint64(count), values.reshape((lanes,) + dims)
    split, half = half_shape(dims)
    half_dims = (half,) if split < 0 else dims[:split] + (half,) + dims[split + 1:]
    half_count = int(np.prod(half_dims, dtype=np.int64))
    counters = state[:, 1:2] + np.arange(half_count, dtype=np.uint64)
    x0, x1 = threefry2x32(*_low_high(counters), k0, k1)
    if split < 0:
        values = x0.reshape((lanes,))
    else:
        pair = np.stack([x.reshape((lanes,) + half_dims) for x in (x0, x1)], axis=2 + split)
        merged = pair.reshape((lanes,) + dims[:split] + (2 * half,) + dims[split + 1:])
        values = merged[(slice(None),) * (1 + split) + (slice(0, dims[split]),)]
    return state[:, 1] + np.uint64(half_count), values


def _philox(state: Array, dims: tuple[int, ...], bits: int) -> tuple[Array, Array]:
    lanes, words = state.shape
    k0, k1 = (w[:, None] for w in _low_high(state[:, 0]))
    low, high = (state[:, 1], state[:, 2]) if words >= 3 else (state[:, 1], state[:, 0])
    count = int(np.prod(dims, dtype=np.int64))
    blocks = -(-count * (2 if bits == 64 else 1) // 4)
    steps = np.arange(blocks, dtype=np.uint64)
    counter_low = low[:, None] + steps
    counter_high = np.where(counter_low < low[:, None], high[:, None] + np.uint64(1),
                            high[:, None])
    out = philox4x32([*_low_high(counter_low), *_low_high(counter_high)], k0, k1)
    if bits == 64:
        wide = [out[2 * j].astype(np.uint64) | (out[2 * j + 1].astype(np.uint64) << np.uint64(32))
                for j in range(2)]
        values = np.stack(wide, axis=2).reshape(lanes, -1)[:, :count]
    else:
        values = np.stack(out, axis=2).reshape(lanes, -1)[:, :count]
    new_low = low + np.uint64(blocks)
    new_high = np.where(new_low < low, high + np.uint64(1), high)
    tail = np.stack([new_low, new_high], axis=1) if words >= 3 else new_low[:, None]
    return tail, values.reshape((lanes,) + dims)


def rng_bit_generator(algorithm: str, state: Array, dims: tuple[int, ...],
                      dtype: np.dtype) -> tuple[Array, Array]:
    """(new state, random bits as `dtype`) for `algorithm` rng_three_fry / rng_philox /
    rng_default; see the module contract."""
    bits = np.dtype(dtype).itemsize * 8
    words = state.shape[1]
    if algorithm in ("rng_default", "rng_philox"):
        if words < 2:
            raise InterpError(f"philox needs a u64[2] or u64[3] state, got u64[{words}]")
        tail, values = _philox(state, dims, bits)
    elif algorithm == "rng_three_fry":
        if words != 2:
            raise InterpError(f"three_fry needs a u64[2] state, got u64[{words}]")
        new_counter, values = _threefry(state, dims, bits)
        tail = new_counter[:, None]
    else:
        raise InterpError(f"rng-bit-generator algorithm {algorithm!r} is not supported by "
                          "the interpreter")
    if bits < 32:  # the low bits of 32-bit values
        values = values.astype(np.dtype(f"u{bits // 8}"))
    new_state = np.concatenate([state[:, :1], tail[:, :words - 1]], axis=1)
    return new_state, np.ascontiguousarray(values).view(dtype)
