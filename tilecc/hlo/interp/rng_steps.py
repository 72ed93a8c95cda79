"""rng and rng-get-and-update-state as XLA CPU computes them (jaxlib 0.10.2, measured).

XLA CPU never runs `rng` itself: its RngExpander (xla/service/rng_expander.cc) replaces
each one by a call of a generated computation (xla/hlo/builder/lib/prng.cc) on a u64 key
constant and the u64[2] value of a new rng-get-and-update-state whose delta is the number
of 32-bit words of the result (elements, twice that for 64-bit types). The steps follow it.

rng-get-and-update-state (xla/backends/cpu/runtime/rng_state_thunk.cc): each instruction
owns a 128-bit counter, 0x7012395 when the module is compiled; an execution returns it as
u64[2] {low word, high word} and then adds `delta` (mod 2**128). The counter lives as long
as the compiled module: runs of one CompiledModule continue it as runs of one XLA
executable do, and every evaluate_module call compiles afresh (a new executable); a while
body advances it on every trip. XLA CPU's devices share the instruction's one counter and
each takes the next value in the order it gets there, a race (measured: 2 replicas took
it in device order in 18 of 30 runs, 4 replicas in 19 of 30); the interpreter gives lane d
the counter plus d * delta, then advances it by lanes * delta.

rng:
- key: the k-th rng the expander rewrites gets M[k] ^ G[n + k], M the outputs of
  std::mt19937_64 seeded with 42 (the module's own generator, HloModule::RandomNew64) and G
  those of a process-wide generator (the module config seed jaxlib compiles with is 0);
  measured, G is the output sequence of std::mt19937_64 seeded with 8, and n is the number
  of rng instructions that process expanded before. The interpreter takes n = 0: the
  first module with rngs that a process compiles. k counts over computations in module order,
  instructions in post order: XLA's order over the module it compiles, which is the
  text's for the modules measured; jaxlib's HLO -> StableHLO -> HLO path may reorder the
  text (measured: a zero-element rng moved before the others), and then k differs.
- bits: Philox4x32-10 under that key with the instruction's own counter (as above, the
  delta the expander gives it), in rng_bit_generator's rng_philox layout.
- uniform, f32 / f64: u * (b - a) + a with u = (bits >> (width - m)) * 2**-m, m the
  mantissa bits, the multiply and add fused (XLA CPU contracts them: measured, 0 of 16,384
  values differ, 5,442 would with two roundings); f16 / bf16 run as f32 on operands
  converted to f32 and round the result back (the expander's own rewrite).
- uniform, s32 / u32 / s64 / u64: r = bits % (b - a) in the unsigned type (wrapping; r =
  bits when b == a), the value a + (r >> 1) + (r - (r >> 1)), wrapping.
- normal, f32 / f64 (f16 / bf16 as f32): the shape is split in halves (rng.half_shape);
  uniform [0, 1) values u are drawn for it with the split dimension rounded up to even,
  each pair (u0, u1) at positions 2k, 2k + 1 gives sqrt(-2 log max(u0, 1e-7)) times
  sin(2 pi u1) at 2k and cos(2 pi u1) at 2k + 1 (Box-Muller, in the type), then
  sigma * z + mean, fused. The pairs draw more words than the delta for an odd split
  dimension, as XLA's do. log / sin / cos are numpy's, not XLA CPU's own approximations
  (measured on 4,096 values: 669 f32 differ, by at most 4.8e-7, and 3 f64).
Other element types: XLA CPU's process dies in the expander (a CHECK for every type under
32 bits but f16 / bf16: pred, s8, u8, s16, fp8 measured) or it refuses the module (an
integer rng_normal); the interpreter refuses them.
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp import elementwise as ew
from tilecc.hlo.interp.collective_steps import device_ids
from tilecc.hlo.interp.complex_math import fused_multiply_add
from tilecc.hlo.interp.rng import half_shape, rng_bit_generator
from tilecc.hlo.interp.values import Lanes, Operands, Runner, Step, Value
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import PrimitiveType as T, is_floating, numpy_dtype, primitive_type_name

Array = np.ndarray
INITIAL_STATE = 0x7012395
_M128 = (1 << 128) - 1
_M64 = (1 << 64) - 1
_MODULE_SEED, _PROCESS_SEED = 42, 8
_FLOAT_TYPES = (T.F32, T.F64)
_AS_F32 = (T.F16, T.BF16)  # the expander rewrites these to an f32 rng
_INT_TYPES = {T.S32: T.U32, T.U32: T.U32, T.S64: T.U64, T.U64: T.U64}
_MANTISSA = {T.F32: 23, T.F64: 52}


def mt19937_64(seed: int, count: int) -> list[int]:
    """The first `count` outputs of C++'s std::mt19937_64 seeded with `seed`."""
    n, m = 312, 156
    state = [seed & _M64]
    for i in range(1, n):
        prev = state[-1]
        state.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & _M64)
    out: list[int] = []
    index = n
    while len(out) < count:
        if index == n:
            for i in range(n):
                y = (state[i] & ~0x7FFFFFFF & _M64) | (state[(i + 1) % n] & 0x7FFFFFFF)
                state[i] = state[(i + m) % n] ^ (y >> 1) ^ (0xB5026F5AA96619E9 if y & 1 else 0)
            index = 0
        y = state[index]
        index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        out.append(y ^ (y >> 43))
    return out


@functools.lru_cache(maxsize=None)
def expander_key(k: int) -> int:
    """The key XLA's RngExpander gives the k-th rng of the first module a process compiles."""
    return mt19937_64(_MODULE_SEED, k + 1)[k] ^ mt19937_64(_PROCESS_SEED, k + 1)[k]


def rng_index(inst: HloInstruction) -> int:
    """k of the module contract: the rng instructions before `inst` in expansion order."""
    comp = inst.parent
    if comp is None:
        return 0
    k = 0
    for c in comp.parent.computations if comp.parent is not None else [comp]:
        for other in c.post_order():
            if other is inst:
                return k
            k += other.opcode is Op.RNG
    return k


class Counter:
    """One instruction's 128-bit state: `draw(lanes, delta)` gives each lane its value
    (lane d: state + d * delta) as (lanes,) low and high u64 words, then advances."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = INITIAL_STATE

    def draw(self, lanes: int, delta: int) -> tuple[Array, Array]:
        values = [(self.value + d * delta) & _M128 for d in range(lanes)]
        self.value = (self.value + lanes * delta) & _M128
        return (np.array([v & _M64 for v in values], np.uint64),
                np.array([v >> 64 for v in values], np.uint64))


def _device_lanes(inst: HloInstruction, d: Lanes) -> int:
    device_ids(inst, d)  # refuses a reducer's scalar lanes, as every per-device step does
    return d.count


def rng_get_and_update_state_step(runner: Runner, inst: HloInstruction) -> Step:
    text = inst.attributes.get("delta", "")
    if not text.removeprefix("-").isdigit() or not -2**63 <= int(text) < 2**63:
        raise InterpError(f"{inst.name}: rng-get-and-update-state needs delta=<an int64>, "
                          f"got {text!r}")
    if inst.shape.is_tuple or inst.shape.element_type != T.U64 or inst.shape.dims != (2,):
        raise InterpError(f"{inst.name}: rng-get-and-update-state returns u64[2], got "
                          f"{inst.shape.to_text()}")
    delta, counter = int(text), Counter()

    def step(a: Operands, d: Lanes) -> Value:
        low, high = counter.draw(_device_lanes(inst, d), delta)
        return np.stack([low, high], axis=1)
    return step


def _fused(t: T, x: Array, y: Array, z: Array) -> Array:
    """x * y + z rounded once, subnormal operands and result flushed (XLA CPU's FTZ)."""
    x, y, z = (ew.widen_flushed(t, v) for v in (x, y, z))
    x, y, z = np.broadcast_arrays(x, y, z)
    return ew.flush_subnormals(fused_multiply_add(x, y, z))


def _uniform_float(t: T, bits: Array, a: Array, b: Array) -> Array:
    width, mantissa = bits.dtype.itemsize * 8, _MANTISSA[t]
    dtype = numpy_dtype(t)
    unit = (bits >> bits.dtype.type(width - mantissa)).astype(dtype) * dtype.type(2.0 ** -mantissa)
    scale = _per_lane(ew.binary(Op.SUBTRACT, t, b, a), bits.ndim)
    return _fused(t, unit, scale, _per_lane(a, bits.ndim))


def _uniform_int(t: T, bits: Array, a: Array, b: Array) -> Array:
    unsigned = numpy_dtype(_INT_TYPES[t])
    low = _per_lane(a.view(unsigned), bits.ndim)
    span = _per_lane(b.view(unsigned), bits.ndim) - low
    r = ew.binary(Op.REMAINDER, _INT_TYPES[t], bits, np.broadcast_to(span, bits.shape))
    half = r >> unsigned.type(1)
    return (low + half + (r - half)).view(numpy_dtype(t))


def _normal(t: T, draw: Callable[[tuple[int, ...]], Array], dims: tuple[int, ...],
            mean: Array, sigma: Array) -> Array:
    split, half = half_shape(dims)
    axis = 1 + max(split, 0)
    even = (2 * half,) if split < 0 else dims[:split] + (2 * half,) + dims[split + 1:]
    dtype = numpy_dtype(t)
    zero, one = np.zeros(1, dtype), np.ones(1, dtype)
    u = _uniform_float(t, draw(even), zero, one)
    u0 = np.take(u, np.arange(0, 2 * half, 2), axis=axis)
    u1 = np.take(u, np.arange(1, 2 * half, 2), axis=axis)
    floor = np.asarray(np.float32(1e-7), dtype)
    radius = ew.unary(Op.SQRT, t, ew.binary(Op.MULTIPLY, t, np.asarray(-2.0, dtype),
                                            ew.unary(Op.LOG, t, np.maximum(u0, floor))))
    angle = ew.binary(Op.MULTIPLY, t, np.asarray(2 * np.pi, dtype), u1)
    pairs = np.stack([ew.binary(Op.MULTIPLY, t, ew.unary(Op.SIN, t, angle), radius),
                      ew.binary(Op.MULTIPLY, t, ew.unary(Op.COS, t, angle), radius)],
                     axis=axis + 1)
    z = pairs.reshape(u.shape)
    kept = dims[split] if split >= 0 else 1  # an odd split dimension drops its last value
    z = z[(slice(None),) * axis + (slice(0, kept),)]
    z = z.reshape((len(mean),) + dims)
    return _fused(t, _per_lane(sigma, z.ndim), z, _per_lane(mean, z.ndim))


def _per_lane(x: Array, ndim: int) -> Array:
    """A (lanes,) scalar operand shaped to broadcast against (lanes, *dims)."""
    return x.reshape(x.shape[:1] + (1,) * (ndim - 1))


def rng_step(runner: Runner, inst: HloInstruction) -> Step:
    distribution = inst.attributes.get("distribution")
    result_type = inst.shape.element_type
    t = T.F32 if result_type in _AS_F32 else result_type
    if inst.shape.is_tuple or len(inst.operands) != 2:
        raise InterpError(f"{inst.name}: rng takes two scalar operands and returns an array")
    if any(op.shape.is_tuple or op.shape.dims or op.shape.element_type != result_type
           for op in inst.operands):
        raise InterpError(f"{inst.name}: rng operands must be {primitive_type_name(result_type)}"
                          " scalars")
    name = primitive_type_name(result_type)
    if distribution == "rng_uniform":
        if t not in _FLOAT_TYPES and t not in _INT_TYPES:
            raise InterpError(f"{inst.name}: rng_uniform of {name} (XLA CPU has f16, bf16, "
                              "f32, f64, s32, u32, s64, u64)")
    elif distribution == "rng_normal":
        if t not in _FLOAT_TYPES:
            raise InterpError(f"{inst.name}: rng_normal of {name} (XLA CPU has f16, bf16, "
                              "f32, f64)")
    else:
        raise InterpError(f"{inst.name}: rng needs distribution=rng_uniform|rng_normal, got "
                          f"{distribution!r}")
    dims = inst.shape.dims
    wide = t in (T.F64, T.S64, T.U64)
    bits_dtype = np.dtype(np.uint64 if wide else np.uint32)
    delta = int(np.prod(dims, dtype=np.int64)) * (2 if wide else 1)
    key, counter = np.uint64(expander_key(rng_index(inst))), Counter()

    def step(a: Operands, d: Lanes) -> Value:
        lanes = _device_lanes(inst, d)
        low, high = counter.draw(lanes, delta)
        state = np.stack([np.full(lanes, key), low, high], axis=1)

        def draw(shape: tuple[int, ...]) -> Array:
            return rng_bit_generator("rng_philox", state, shape, bits_dtype)[1]
        x, y = (np.asarray(v).reshape(lanes) for v in a)
        if t != result_type:
            x, y = (ew.convert(v, result_type, t) for v in (x, y))
        if distribution == "rng_normal":
            out = _normal(t, draw, dims, x, y)
        elif is_floating(t):
            out = _uniform_float(t, draw(dims), x, y)
        else:
            out = _uniform_int(t, draw(dims), x, y)
        return ew.convert(out, t, result_type) if t != result_type else out
    return step
