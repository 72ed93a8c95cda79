"""jax programs of the kinds users write, compiled at test time with XLA's dumps on
(tests/hlo/test_jax_dumps.py reads the dumps).

Contract:
- PROGRAMS: name -> Program(devices, floats, build, shard_map). `devices` is 1 for a
  one-device jit, N for a program on a mesh of N host devices (a shard_map, or a jit with
  NamedSharding arguments that XLA partitions); `floats` is how the test draws the float
  inputs it compares on (FLOAT_POLICIES); `build(jax, jnp, lax, np, rng)` returns
  (function, example arguments), the shapes drawn from `rng`.
- `python jax_programs.py --out DIR --seed S [--only a,b]` (the child process; its XLA_FLAGS
  set by `dump_flags`) lowers and compiles every program once -- nothing is executed -- as
  `jit_<name>`, so each program's dumps under DIR are `module_*.jit_<name>.*.txt`; a program
  that jax refuses is written to DIR/errors.txt as `name: message` and the others go on.
- Shapes come from numpy's default_rng((seed, crc32(name))): a program's shapes do not
  depend on which others run.
- jax is imported only in the child: the test process must not start jax with other flags.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEVICES = 8
"""Host devices of the child: the largest mesh below."""

FLOAT_POLICIES = {
    "clipped": "finite values clipped to [-1, 1], NaN and +-inf kept, each part of a "
               "complex alike (sums do not overflow part-way, so their value does not "
               "depend on the summation order)",
    "finite": "as clipped, NaN and +-inf replaced by 0.5",
    "full": "random_inputs as drawn: the whole range, NaN, +-inf, +-0, extremes",
}


@dataclass(frozen=True)
class Program:
    devices: int
    floats: str
    build: Callable[..., tuple[Callable[..., Any], tuple[Any, ...]]]
    shard_map: bool = False


def dump_flags(dump_dir: Path) -> str:
    """XLA_FLAGS of the child: the host devices, and dumps before optimizations, after them,
    and after each pass of the SPMD partitioner pipeline (only that pipeline's)."""
    return (f"--xla_force_host_platform_device_count={DEVICES} --xla_dump_to={dump_dir} "
            "--xla_dump_hlo_pass_re=.* --xla_dump_hlo_pipeline_re=^spmd-partitioner$")


def _f32(np: Any, rng: Any, *shape: int) -> Any:
    return rng.standard_normal(shape).astype(np.float32)


def _ints(np: Any, rng: Any, dtype: Any, *shape: int) -> Any:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _dim(rng: Any, low: int = 3, high: int = 9) -> int:
    return int(rng.integers(low, high + 1))


# ---- one-device programs --------------------------------------------------------------

def fft(jax, jnp, lax, np, rng):
    n = _dim(rng, 4, 12)
    x = _f32(np, rng, 3, n)
    z = (x + 1j * _f32(np, rng, 3, n)).astype(np.complex64)

    def f(x, z):
        return (jnp.fft.rfft(x), jnp.fft.ifft(z), jnp.fft.fft2(z), jnp.fft.irfft(z, n=n),
                jnp.abs(jnp.fft.fft(x, axis=0)))
    return f, (x, z)


def cumulative(jax, jnp, lax, np, rng):
    n = _dim(rng, 3, 8)

    def f(x, i):
        return (jnp.cumsum(x, 0), jnp.cumprod(x, 1), lax.cummax(x, 0), lax.cummin(x, 1,
                reverse=True), jnp.cumsum(i, 1), lax.cumprod(i, 0), lax.cummax(i, 1),
                lax.cumlogsumexp(x, 0))
    return f, (_f32(np, rng, n, 5), _ints(np, rng, np.int32, n, 4))


def pooling(jax, jnp, lax, np, rng):
    h, w = _dim(rng, 5, 9), _dim(rng, 5, 9)

    def f(x, i):
        mx = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        avg = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
        imin = lax.reduce_window(i, jnp.iinfo(jnp.int32).max, lax.min, (2, 3), (1, 2),
                                 ((1, 0), (1, 1)))
        return mx, avg, imin, jax.grad(lambda v: lax.reduce_window(
            v, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID").sum())(x)
    return f, (_f32(np, rng, 2, h, w, 3), _ints(np, rng, np.int32, h, w))


def conv(jax, jnp, lax, np, rng):
    h = _dim(rng, 6, 10)

    def f(x, k, g):
        same = lax.conv_general_dilated(x, k, (2, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
        dilated = lax.conv_general_dilated(x, k, (1, 1), ((1, 1), (2, 0)), rhs_dilation=(2, 1),
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
        grouped = lax.conv_general_dilated(x, g, (1, 1), "VALID", feature_group_count=2,
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return same, dilated, grouped
    return f, (_f32(np, rng, 2, h, 7, 4), _f32(np, rng, 3, 2, 4, 5), _f32(np, rng, 2, 2, 2, 6))


def conv_transpose(jax, jnp, lax, np, rng):
    h = _dim(rng, 4, 7)

    def f(x, k):
        up = lax.conv_transpose(x, k, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        valid = lax.conv_transpose(x, k, (2, 1), "VALID",
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"))
        grad_x = jax.grad(lambda v: lax.conv_general_dilated(
            v, k, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")).sum())(x)
        return up, valid, grad_x
    return f, (_f32(np, rng, 1, h, h, 3), _f32(np, rng, 3, 3, 3, 3))


def bit_ops(jax, jnp, lax, np, rng):
    n = _dim(rng)

    def f(a, b, u, s):
        return (a & b, a | b, a ^ b, ~a, a << b, a >> b, lax.shift_right_logical(a, b),
                u << (u & 7), u >> 3, ~u, lax.population_count(u), lax.clz(a),
                s << 3, s >> (s & 15), lax.shift_right_logical(s, jnp.int16(2)),
                lax.population_count(s), (a.astype(jnp.uint32) >> 31).astype(jnp.int32))
    return f, (_ints(np, rng, np.int32, n), _ints(np, rng, np.int32, n),
               _ints(np, rng, np.uint8, n), _ints(np, rng, np.int16, n))


def cond_switch(jax, jnp, lax, np, rng):
    n = _dim(rng)

    def f(x, k):
        a = lax.cond(x.sum() > 0, lambda v: jnp.sin(v) * 2, lambda v: v - 1, x)
        b = lax.switch(k, [lambda v: v + 1, lambda v: v * v, lambda v: jnp.exp(-v)], x)
        c = lax.cond(k % 2 == 0, lambda: k * 3, lambda: -k)
        return a, b, c, jnp.where(x > 0, x, jnp.zeros_like(x))
    return f, (_f32(np, rng, n), np.int32(1))


def loops(jax, jnp, lax, np, rng):
    n, m = _dim(rng, 2, 6), _dim(rng)

    def f(xs, i, bound):
        c, ys = lax.scan(lambda c, v: (c * 0.5 + jnp.tanh(v), c.sum()), jnp.zeros(m), xs)
        total = lax.fori_loop(0, n, lambda j, acc: acc * 3 + j, i)
        r = lax.fori_loop(0, 3, lambda j, v: jnp.roll(v, 1) + j, xs[0])
        # a data-dependent trip count, bounded as users bound one
        w = lax.while_loop(lambda s: s[0] < jnp.clip(bound, 0, 5),
                           lambda s: (s[0] + 1, s[1] * 2 - 1), (jnp.int32(0), i))
        return c, ys, total, r, w
    return f, (_f32(np, rng, n, m), _ints(np, rng, np.int32, 3), np.int32(4))


def einsum_batch(jax, jnp, lax, np, rng):
    b, q, d = _dim(rng, 2, 4), _dim(rng, 2, 6), _dim(rng, 3, 8)

    def f(x, y, w, i8, j8):
        return (jnp.einsum("bqd,bkd->bqk", x, y), jnp.einsum("bqd,de->bqe", x, w),
                lax.dot_general(x, y, (((2,), (2,)), ((0,), (0,))),
                                precision=lax.Precision.HIGHEST),
                jnp.einsum("bqd,bqd->b", x, x),
                lax.dot_general(i8, j8, (((1,), (0,)), ((), ())),
                                preferred_element_type=jnp.int32))
    return f, (_f32(np, rng, b, q, d), _f32(np, rng, b, q + 1, d), _f32(np, rng, d, 3),
               _ints(np, rng, np.int8, q, d), _ints(np, rng, np.int8, d, 3))


def sort_topk(jax, jnp, lax, np, rng):
    n = _dim(rng, 5, 12)

    def f(x, i, u):
        return (jnp.sort(x, axis=1), jnp.argsort(x, axis=0, stable=True),
                jnp.argsort(i, descending=True, stable=True), lax.top_k(x, 3),
                lax.top_k(i, 2), lax.sort((u, x[0]), num_keys=1),
                jnp.sort(u, descending=True))
    return f, (_f32(np, rng, 4, n), _ints(np, rng, np.int32, n), _ints(np, rng, np.uint16, n))


def int_div_rem(jax, jnp, lax, np, rng):
    n = _dim(rng)

    def f(a, b, c, d, u, v, x, y):
        return (a // b, a % b, lax.div(a, b), lax.rem(a, b), jnp.fmod(a, b),
                c // d, c % d, u // v, u % v, jnp.remainder(x, y), jnp.floor_divide(x, y),
                jnp.fmod(x, y), a // 3, a % -5)
    return f, (_ints(np, rng, np.int32, n), _ints(np, rng, np.int32, n),
               _ints(np, rng, np.int8, n), _ints(np, rng, np.int8, n),
               _ints(np, rng, np.uint16, n), _ints(np, rng, np.uint16, n),
               _f32(np, rng, n), _f32(np, rng, n))


def random_threefry(jax, jnp, lax, np, rng):
    n = _dim(rng)

    def f(key):
        k1, k2 = jax.random.split(key)
        return (jax.random.normal(k1, (n, 2)), jax.random.uniform(k2, (n,)),
                jax.random.randint(key, (n,), -5, 9), jax.random.bits(k1, (3,), jnp.uint8),
                jax.random.bernoulli(k2, 0.3, (n,)), jax.random.permutation(key, n),
                jax.random.fold_in(key, 7))
    return f, (jax.random.key_data(jax.random.key(0)),)


def random_rbg(jax, jnp, lax, np, rng):
    n = _dim(rng)

    def f(data):
        key = jax.random.wrap_key_data(data, impl="rbg")
        k1, k2 = jax.random.split(key)
        return (jax.random.normal(k1, (n,)), jax.random.uniform(k2, (2, n)),
                jax.random.bits(key, (n,), jnp.uint32), jax.random.randint(k1, (4,), 0, 100))
    return f, (jax.random.key_data(jax.random.key(0, impl="rbg")),)


def activations(jax, jnp, lax, np, rng):
    n = _dim(rng)

    def f(x):
        return (jax.nn.gelu(x), jax.nn.gelu(x, approximate=False), jax.nn.log_softmax(x),
                jax.nn.logsumexp(x, axis=1), jax.nn.softplus(x), jax.nn.silu(x),
                jax.nn.sigmoid(x), jax.nn.softmax(x, axis=0), jax.scipy.special.erf(x),
                jax.nn.relu6(x), jnp.tanh(x))
    return f, (_f32(np, rng, 3, n),)


def pad_modes(jax, jnp, lax, np, rng):
    n, m = _dim(rng, 3, 6), _dim(rng, 3, 6)

    def f(x, i):
        return (jnp.pad(x, ((1, 2), (2, 1)), mode="reflect"), jnp.pad(x, 2, mode="edge"),
                jnp.pad(x, ((0, 3), (1, 0)), mode="symmetric"), jnp.pad(i, (2, 3), mode="wrap"),
                jnp.pad(i, 1, constant_values=-7), lax.pad(x, jnp.float32(0.5),
                                                           ((1, -1, 1), (-1, 2, 2))))
    return f, (_f32(np, rng, n, m), _ints(np, rng, np.int32, m))


def complex_ops(jax, jnp, lax, np, rng):
    n = _dim(rng)

    def f(z, w, x):
        c = lax.complex(x, x[::-1])
        return (z * w, z / w, jnp.abs(z), jnp.conj(z) + c, jnp.exp(z), jnp.angle(w),
                jnp.sqrt(z), jnp.real(z * c), jnp.imag(w) * x, jnp.sum(z * w, axis=1))
    z = (_f32(np, rng, 2, n) + 1j * _f32(np, rng, 2, n)).astype(np.complex64)
    return f, (z, z[::-1].copy(), _f32(np, rng, n))


def complex_matmul(jax, jnp, lax, np, rng):
    b, n, k = _dim(rng, 1, 3), _dim(rng, 2, 5), _dim(rng, 2, 7)

    def f(z, w):
        return (jnp.einsum("bnk,bmk->bnm", z, w), z[0] @ w[0].conj().T, jnp.vdot(z, w),
                jnp.einsum("bnk,bnk->bk", z, jnp.conj(z)).real)
    z = (_f32(np, rng, b, n, k) + 1j * _f32(np, rng, b, n, k)).astype(np.complex64)
    return f, (z, (z * 1j)[:, ::-1].copy())


def dynamic_slices(jax, jnp, lax, np, rng):
    n, m = _dim(rng, 4, 9), _dim(rng, 4, 9)

    def f(x, i, j, v):
        return (lax.dynamic_slice(x, (i, j), (2, 3)), lax.dynamic_update_slice(x, v, (j, i)),
                x[i], lax.dynamic_slice_in_dim(x, i, 2, axis=1),
                lax.dynamic_update_index_in_dim(x, v[0], j, 0))
    return f, (_f32(np, rng, n, m), np.int32(1), np.int32(2), _f32(np, rng, 2, m))


def gather_scatter(jax, jnp, lax, np, rng):
    n, k = _dim(rng, 4, 10), _dim(rng, 3, 7)

    def f(x, raw, v, i):
        idx = raw % n  # in-bounds, with repeats
        return (x[idx], x.at[idx].add(v), x.at[idx].set(v), x.at[idx].max(v),
                x.at[idx].min(v), x.at[raw].set(v, mode="drop"), x.at[raw].get(mode="clip"),
                jnp.take_along_axis(x, jnp.abs(i[:, None]) % x.shape[1], axis=1),
                i.at[idx].add(raw), i.at[idx].mul(3))
    return f, (_f32(np, rng, n, 3), _ints(np, rng, np.int32, k), _f32(np, rng, k, 3),
               _ints(np, rng, np.int32, n))


def int_reductions(jax, jnp, lax, np, rng):
    n = _dim(rng)

    def f(i, u, s, x):
        return (jnp.max(i), jnp.min(u), jnp.sum(s), jnp.prod(i, axis=0), jnp.sum(u, axis=1),
                jnp.argmax(x, axis=1), jnp.argmin(x), jnp.nanargmax(x, axis=0), jnp.all(i > 0),
                jnp.any(u == 0, axis=0), jnp.count_nonzero(s), jnp.max(x), jnp.min(x, axis=0))
    return f, (_ints(np, rng, np.int32, 128, n), _ints(np, rng, np.uint8, n, 4),
               _ints(np, rng, np.int16, 16, n), _f32(np, rng, n, 6))


def attention_norm(jax, jnp, lax, np, rng):
    t, d = _dim(rng, 3, 8), _dim(rng, 4, 8)

    def f(q, k, v, g):
        s = jnp.einsum("td,sd->ts", q, k) / jnp.sqrt(jnp.float32(d))
        s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -1e9)
        o = jax.nn.softmax(s, axis=-1) @ v
        mu = o.mean(-1, keepdims=True)
        return (o - mu) * lax.rsqrt(o.var(-1, keepdims=True) + 1e-5) * g
    return f, (_f32(np, rng, t, d), _f32(np, rng, t, d), _f32(np, rng, t, d), _f32(np, rng, d))


def convert_clip(jax, jnp, lax, np, rng):
    n = _dim(rng)

    def f(x, i):
        return (x.astype(jnp.int32), x.astype(jnp.uint8), i.astype(jnp.float32),
                i.astype(jnp.int8), jnp.clip(x, -0.5, 0.5), jnp.round(x), jnp.floor(x),
                jnp.sign(x), jnp.nan_to_num(x), jnp.clip(i, -100, 100),
                x.astype(jnp.bfloat16), x.astype(jnp.float16) * 3, jnp.isnan(x),
                lax.reduce_precision(x, 5, 10))
    return f, (_f32(np, rng, n), _ints(np, rng, np.int32, n))


def vmap_grad(jax, jnp, lax, np, rng):
    n, d = _dim(rng, 2, 5), _dim(rng, 3, 6)

    def loss(w, x):
        return jnp.mean(jnp.tanh(x @ w) ** 2)

    def f(w, xs):
        per = jax.vmap(jax.grad(loss), in_axes=(None, 0))(w, xs)
        return per, jax.value_and_grad(loss)(w, xs[0]), jax.vmap(jnp.outer)(xs[:, 0], xs[:, 1])
    return f, (_f32(np, rng, d, 2), _f32(np, rng, n, 4, d))


def segments(jax, jnp, lax, np, rng):
    n, s = _dim(rng, 5, 12), _dim(rng, 2, 5)

    def f(x, raw):
        ids = raw % s
        return (jax.ops.segment_sum(x, ids, s), jax.ops.segment_max(x, ids, s),
                jax.nn.one_hot(ids, s), jnp.bincount(ids, length=s),
                jax.ops.segment_min(raw, ids, s))
    return f, (_f32(np, rng, n), _ints(np, rng, np.int32, n))


def half_precision(jax, jnp, lax, np, rng):
    n = _dim(rng, 2, 6)

    # / 4, not / 3: XLA rewrites x / c as x * (1 / c), which in f16 rounds otherwise than
    # the division the module says (measured: 1.071 vs XLA's 1.07 for c = 3)
    def f(a, b):
        ab, bb = a.astype(jnp.bfloat16), b.astype(jnp.bfloat16)
        return (jnp.dot(ab, bb, preferred_element_type=jnp.float32), ab * bb[:, 0] + 1,
                jnp.max(ab, axis=0), a.astype(jnp.float16) / 4, jnp.exp(ab))
    return f, (_f32(np, rng, n, 4), _f32(np, rng, 4, 3))


# ---- programs on several devices --------------------------------------------------------

def _mesh(jax, shape, names):
    return jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Explicit,) * len(shape))


def _put(jax, x, mesh, spec):
    from jax.sharding import NamedSharding
    return jax.device_put(x, NamedSharding(mesh, spec))


def psum_small_ints(jax, jnp, lax, np, rng):
    from jax.sharding import PartitionSpec as P
    mesh = _mesh(jax, (4,), ("i",))
    n = _dim(rng, 1, 4)

    def body(u, s, m):
        return (lax.psum(u, "i"), lax.psum(s, "i"), lax.psum(m, "i"), lax.pmax(u, "i"),
                lax.pmin(s, "i"), lax.psum(u[0, 0], "i")[None, None],
                lax.psum(m.astype(jnp.int32), "i"),
                lax.psum(jnp.sum(s, dtype=jnp.int32), "i")[None, None],
                lax.psum(jnp.max(u).astype(jnp.uint32), "i")[None, None])
    fn = jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    return fn, (_put(jax, _ints(np, rng, np.uint8, 4 * n, 3), mesh, P("i")),
                _put(jax, _ints(np, rng, np.int16, 4 * n, 2), mesh, P("i")),
                _put(jax, rng.integers(0, 2, (4 * n, 2)).astype(bool), mesh, P("i")))


def collectives(jax, jnp, lax, np, rng):
    from jax.sharding import PartitionSpec as P
    mesh = _mesh(jax, (4,), ("i",))
    n = 4 * _dim(rng, 1, 3)
    ring = [(j, (j + 1) % 4) for j in range(4)]

    def body(x, i):
        return (lax.ppermute(x, "i", ring), lax.all_to_all(x, "i", 0, 0, tiled=True),
                lax.psum_scatter(x, "i", scatter_dimension=0, tiled=True),
                lax.all_gather(x, "i", tiled=True), lax.all_gather(i, "i"),
                lax.psum_scatter(i, "i", tiled=True), lax.ppermute(i, "i", [(0, 2), (2, 0)]),
                lax.pmean(x, "i"))
    fn = jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    return fn, (_put(jax, _f32(np, rng, 4 * n, 3), mesh, P("i")),
                _put(jax, _ints(np, rng, np.int32, 4 * n), mesh, P("i")))


def mesh2d(jax, jnp, lax, np, rng):
    from jax.sharding import PartitionSpec as P
    mesh = _mesh(jax, (2, 4), ("x", "y"))
    ring = [(j, (j + 1) % 4) for j in range(4)]

    def body(v, i):
        return (lax.psum(v, "x"), lax.pmax(v, "y"), lax.psum(i, ("x", "y")), lax.psum(i, "y"),
                lax.pmin(i, "x"), lax.all_gather(v, "y", tiled=True),
                lax.psum_scatter(v, "y", scatter_dimension=1, tiled=True),
                lax.ppermute(v, "y", ring), lax.all_to_all(v, "y", 1, 1, tiled=True))
    fn = jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    return fn, (_put(jax, _f32(np, rng, 4, 32), mesh, P("x", "y")),
                _put(jax, _ints(np, rng, np.int32, 2, 4 * _dim(rng, 1, 3)), mesh, P("x", "y")))


def shard_map_loop(jax, jnp, lax, np, rng):
    from jax.sharding import PartitionSpec as P
    mesh = _mesh(jax, (8,), ("d",))

    def body(s, f):
        def step(j, c):
            a, b = c
            return a + lax.psum(a[0], "d") * j, b * 0.5 + lax.pmax(b, "d")
        a, b = lax.fori_loop(0, 3, step, (s, f))
        c = lax.cond(lax.psum(a[0], "d") > 0, lambda v: v + lax.psum(v, "d"),
                     lambda v: v * 2, s)
        return a, b, c, lax.psum(jnp.max(s), "d")[None]
    fn = jax.shard_map(body, mesh=mesh, in_specs=P("d"), out_specs=P("d"))
    return fn, (_put(jax, _ints(np, rng, np.int32, 8), mesh, P("d")),
                _put(jax, _f32(np, rng, 8 * _dim(rng, 1, 3)), mesh, P("d")))


def sharded_mlp(jax, jnp, lax, np, rng):
    from jax.sharding import PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"),
                         axis_types=(jax.sharding.AxisType.Auto,) * 2)
    d, h = 4 * _dim(rng, 1, 2), 4 * _dim(rng, 1, 3)

    def loss(w, x, y):
        z = jax.nn.gelu(x @ w["w1"] + w["b1"])
        return jnp.mean(jnp.sum((z @ w["w2"] - y) ** 2, -1))

    def step(w, x, y):
        g = jax.grad(loss)(w, x, y)
        return jax.tree.map(lambda a, b: a - 0.1 * b, w, g), loss(w, x, y)
    w = {"w1": _put(jax, _f32(np, rng, d, h), mesh, P(None, "model")),
         "b1": _put(jax, _f32(np, rng, h), mesh, P("model")),
         "w2": _put(jax, _f32(np, rng, h, 3), mesh, P("model", None))}
    return step, (w, _put(jax, _f32(np, rng, 8, d), mesh, P("data")),
                  _put(jax, _f32(np, rng, 8, 3), mesh, P("data")))


def sharded_ints(jax, jnp, lax, np, rng):
    # no cumsum along the sharded axis: its partitioned form reads partition-id, which XLA
    # CPU does not run under SPMD partitioning, so that dump would have no oracle
    from jax.sharding import PartitionSpec as P
    mesh = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    n = 4 * 32 * _dim(rng, 1, 2)  # a device's [n / 4, 4] has 128k elements: a scalar reduce

    def f(a, u):
        return (jnp.sum(a), jnp.max(a), jnp.max(a, axis=0), jnp.min(u),
                jnp.sum(u, axis=0, dtype=jnp.uint32), jnp.cumsum(a, axis=1), jnp.any(a < 0))
    return f, (_put(jax, _ints(np, rng, np.int32, n, 4), mesh, P("i")),
               _put(jax, _ints(np, rng, np.uint8, n, 2), mesh, P("i")))


PROGRAMS: dict[str, Program] = {
    "fft": Program(1, "finite", fft),
    "cumulative": Program(1, "clipped", cumulative),
    "pooling": Program(1, "clipped", pooling),
    "conv": Program(1, "clipped", conv),
    "conv_transpose": Program(1, "finite", conv_transpose),
    "bit_ops": Program(1, "full", bit_ops),
    "cond_switch": Program(1, "full", cond_switch),
    "loops": Program(1, "clipped", loops),
    "einsum_batch": Program(1, "clipped", einsum_batch),
    "sort_topk": Program(1, "full", sort_topk),
    "int_div_rem": Program(1, "full", int_div_rem),
    "random_threefry": Program(1, "full", random_threefry),
    "random_rbg": Program(1, "full", random_rbg),
    "activations": Program(1, "full", activations),
    "pad_modes": Program(1, "full", pad_modes),
    "complex_ops": Program(1, "clipped", complex_ops),
    "complex_matmul": Program(1, "finite", complex_matmul),
    "dynamic_slices": Program(1, "full", dynamic_slices),
    "gather_scatter": Program(1, "clipped", gather_scatter),
    "int_reductions": Program(1, "full", int_reductions),
    "attention_norm": Program(1, "clipped", attention_norm),
    "convert_clip": Program(1, "full", convert_clip),
    "vmap_grad": Program(1, "clipped", vmap_grad),
    "segments": Program(1, "clipped", segments),
    "half_precision": Program(1, "clipped", half_precision),
    "psum_small_ints": Program(4, "full", psum_small_ints, shard_map=True),
    "collectives": Program(4, "clipped", collectives, shard_map=True),
    "mesh2d": Program(8, "clipped", mesh2d, shard_map=True),
    "shard_map_loop": Program(8, "clipped", shard_map_loop, shard_map=True),
    "sharded_mlp": Program(8, "clipped", sharded_mlp),
    "sharded_ints": Program(4, "full", sharded_ints),
}


def compile_all(out: Path, seed: int, only: set[str] | None) -> None:  # pragma: no cover
    """The child: lower and compile every program (see the module contract)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    errors = []
    for name, program in PROGRAMS.items():
        if only is not None and name not in only:
            continue
        try:
            rng = np.random.default_rng((seed, zlib.crc32(name.encode())))
            fn, args = program.build(jax, jnp, lax, np, rng)

            def entry(*values: Any, fn: Callable[..., Any] = fn) -> Any:
                return fn(*values)
            entry.__name__ = entry.__qualname__ = name  # the module is jit_<name>
            jax.jit(entry).lower(*args).compile()
        except Exception as exc:  # one refused program must not hide the others
            first = (str(exc).strip().splitlines() or [""])[0]
            errors.append(f"{name}: {type(exc).__name__}: {first}\n")
    (out / "errors.txt").write_text("".join(errors))


def main() -> int:  # pragma: no cover - runs under jax only
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", help="comma-separated program names (default: all)")
    args = parser.parse_args()
    compile_all(Path(args.out), args.seed, set(args.only.split(",")) if args.only else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
