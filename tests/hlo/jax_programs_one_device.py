"""The one-device programs of jax_programs.PROGRAMS, and the shape and value helpers all
its programs draw with: `build(jax, jnp, lax, np, rng)` -> (function, example arguments),
jax's modules passed in (imported only in the child), the shapes drawn from `rng`."""

from __future__ import annotations

from typing import Any


def f32s(np: Any, rng: Any, *shape: int) -> Any:
    return rng.standard_normal(shape).astype(np.float32)


def ints(np: Any, rng: Any, dtype: Any, *shape: int) -> Any:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def dim(rng: Any, low: int = 3, high: int = 9) -> int:
    return int(rng.integers(low, high + 1))


def fft(jax, jnp, lax, np, rng):
    n = dim(rng, 4, 12)
    x = f32s(np, rng, 3, n)
    z = (x + 1j * f32s(np, rng, 3, n)).astype(np.complex64)

    def f(x, z):
        return (jnp.fft.rfft(x), jnp.fft.ifft(z), jnp.fft.fft2(z), jnp.fft.irfft(z, n=n),
                jnp.abs(jnp.fft.fft(x, axis=0)))
    return f, (x, z)


def cumulative(jax, jnp, lax, np, rng):
    n = dim(rng, 3, 8)

    def f(x, i):
        return (jnp.cumsum(x, 0), jnp.cumprod(x, 1), lax.cummax(x, 0), lax.cummin(x, 1,
                reverse=True), jnp.cumsum(i, 1), lax.cumprod(i, 0), lax.cummax(i, 1),
                lax.cumlogsumexp(x, 0))
    return f, (f32s(np, rng, n, 5), ints(np, rng, np.int32, n, 4))


def pooling(jax, jnp, lax, np, rng):
    h, w = dim(rng, 5, 9), dim(rng, 5, 9)

    def f(x, i):
        mx = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        avg = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
        imin = lax.reduce_window(i, jnp.iinfo(jnp.int32).max, lax.min, (2, 3), (1, 2),
                                 ((1, 0), (1, 1)))
        return mx, avg, imin, jax.grad(lambda v: lax.reduce_window(
            v, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID").sum())(x)
    return f, (f32s(np, rng, 2, h, w, 3), ints(np, rng, np.int32, h, w))


def conv(jax, jnp, lax, np, rng):
    h = dim(rng, 6, 10)

    def f(x, k, g):
        same = lax.conv_general_dilated(x, k, (2, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
        dilated = lax.conv_general_dilated(x, k, (1, 1), ((1, 1), (2, 0)), rhs_dilation=(2, 1),
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
        grouped = lax.conv_general_dilated(x, g, (1, 1), "VALID", feature_group_count=2,
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return same, dilated, grouped
    return f, (f32s(np, rng, 2, h, 7, 4), f32s(np, rng, 3, 2, 4, 5), f32s(np, rng, 2, 2, 2, 6))


def conv_transpose(jax, jnp, lax, np, rng):
    h = dim(rng, 4, 7)

    def f(x, k):
        up = lax.conv_transpose(x, k, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        valid = lax.conv_transpose(x, k, (2, 1), "VALID",
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"))
        grad_x = jax.grad(lambda v: lax.conv_general_dilated(
            v, k, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")).sum())(x)
        return up, valid, grad_x
    return f, (f32s(np, rng, 1, h, h, 3), f32s(np, rng, 3, 3, 3, 3))


def bit_ops(jax, jnp, lax, np, rng):
    n = dim(rng)

    def f(a, b, u, s):
        return (a & b, a | b, a ^ b, ~a, a << b, a >> b, lax.shift_right_logical(a, b),
                u << (u & 7), u >> 3, ~u, lax.population_count(u), lax.clz(a),
                s << 3, s >> (s & 15), lax.shift_right_logical(s, jnp.int16(2)),
                lax.population_count(s), (a.astype(jnp.uint32) >> 31).astype(jnp.int32))
    return f, (ints(np, rng, np.int32, n), ints(np, rng, np.int32, n),
               ints(np, rng, np.uint8, n), ints(np, rng, np.int16, n))


def cond_switch(jax, jnp, lax, np, rng):
    n = dim(rng)

    def f(x, k):
        a = lax.cond(x.sum() > 0, lambda v: jnp.sin(v) * 2, lambda v: v - 1, x)
        b = lax.switch(k, [lambda v: v + 1, lambda v: v * v, lambda v: jnp.exp(-v)], x)
        c = lax.cond(k % 2 == 0, lambda: k * 3, lambda: -k)
        return a, b, c, jnp.where(x > 0, x, jnp.zeros_like(x))
    return f, (f32s(np, rng, n), np.int32(1))


def loops(jax, jnp, lax, np, rng):
    n, m = dim(rng, 2, 6), dim(rng)

    def f(xs, i, bound):
        c, ys = lax.scan(lambda c, v: (c * 0.5 + jnp.tanh(v), c.sum()), jnp.zeros(m), xs)
        total = lax.fori_loop(0, n, lambda j, acc: acc * 3 + j, i)
        r = lax.fori_loop(0, 3, lambda j, v: jnp.roll(v, 1) + j, xs[0])
        # a data-dependent trip count, bounded as users bound one
        w = lax.while_loop(lambda s: s[0] < jnp.clip(bound, 0, 5),
                           lambda s: (s[0] + 1, s[1] * 2 - 1), (jnp.int32(0), i))
        return c, ys, total, r, w
    return f, (f32s(np, rng, n, m), ints(np, rng, np.int32, 3), np.int32(4))


def einsum_batch(jax, jnp, lax, np, rng):
    b, q, d = dim(rng, 2, 4), dim(rng, 2, 6), dim(rng, 3, 8)

    def f(x, y, w, i8, j8):
        return (jnp.einsum("bqd,bkd->bqk", x, y), jnp.einsum("bqd,de->bqe", x, w),
                lax.dot_general(x, y, (((2,), (2,)), ((0,), (0,))),
                                precision=lax.Precision.HIGHEST),
                jnp.einsum("bqd,bqd->b", x, x),
                lax.dot_general(i8, j8, (((1,), (0,)), ((), ())),
                                preferred_element_type=jnp.int32))
    return f, (f32s(np, rng, b, q, d), f32s(np, rng, b, q + 1, d), f32s(np, rng, d, 3),
               ints(np, rng, np.int8, q, d), ints(np, rng, np.int8, d, 3))


def sort_topk(jax, jnp, lax, np, rng):
    n = dim(rng, 5, 12)

    def f(x, i, u):
        return (jnp.sort(x, axis=1), jnp.argsort(x, axis=0, stable=True),
                jnp.argsort(i, descending=True, stable=True), lax.top_k(x, 3),
                lax.top_k(i, 2), lax.sort((u, x[0]), num_keys=1),
                jnp.sort(u, descending=True))
    return f, (f32s(np, rng, 4, n), ints(np, rng, np.int32, n), ints(np, rng, np.uint16, n))


def int_div_rem(jax, jnp, lax, np, rng):
    n = dim(rng)

    def f(a, b, c, d, u, v, x, y):
        return (a // b, a % b, lax.div(a, b), lax.rem(a, b), jnp.fmod(a, b),
                c // d, c % d, u // v, u % v, jnp.remainder(x, y), jnp.floor_divide(x, y),
                jnp.fmod(x, y), a // 3, a % -5)
    return f, (ints(np, rng, np.int32, n), ints(np, rng, np.int32, n),
               ints(np, rng, np.int8, n), ints(np, rng, np.int8, n),
               ints(np, rng, np.uint16, n), ints(np, rng, np.uint16, n),
               f32s(np, rng, n), f32s(np, rng, n))


def random_threefry(jax, jnp, lax, np, rng):
    n = dim(rng)

    def f(key):
        k1, k2 = jax.random.split(key)
        return (jax.random.normal(k1, (n, 2)), jax.random.uniform(k2, (n,)),
                jax.random.randint(key, (n,), -5, 9), jax.random.bits(k1, (3,), jnp.uint8),
                jax.random.bernoulli(k2, 0.3, (n,)), jax.random.permutation(key, n),
                jax.random.fold_in(key, 7))
    return f, (jax.random.key_data(jax.random.key(0)),)


def random_rbg(jax, jnp, lax, np, rng):
    n = dim(rng)

    def f(data):
        key = jax.random.wrap_key_data(data, impl="rbg")
        k1, k2 = jax.random.split(key)
        return (jax.random.normal(k1, (n,)), jax.random.uniform(k2, (2, n)),
                jax.random.bits(key, (n,), jnp.uint32), jax.random.randint(k1, (4,), 0, 100))
    return f, (jax.random.key_data(jax.random.key(0, impl="rbg")),)


def activations(jax, jnp, lax, np, rng):
    n = dim(rng)

    def f(x):
        return (jax.nn.gelu(x), jax.nn.gelu(x, approximate=False), jax.nn.log_softmax(x),
                jax.nn.logsumexp(x, axis=1), jax.nn.softplus(x), jax.nn.silu(x),
                jax.nn.sigmoid(x), jax.nn.softmax(x, axis=0), jax.scipy.special.erf(x),
                jax.nn.relu6(x), jnp.tanh(x))
    return f, (f32s(np, rng, 3, n),)


def pad_modes(jax, jnp, lax, np, rng):
    n, m = dim(rng, 3, 6), dim(rng, 3, 6)

    def f(x, i):
        return (jnp.pad(x, ((1, 2), (2, 1)), mode="reflect"), jnp.pad(x, 2, mode="edge"),
                jnp.pad(x, ((0, 3), (1, 0)), mode="symmetric"), jnp.pad(i, (2, 3), mode="wrap"),
                jnp.pad(i, 1, constant_values=-7), lax.pad(x, jnp.float32(0.5),
                                                           ((1, -1, 1), (-1, 2, 2))))
    return f, (f32s(np, rng, n, m), ints(np, rng, np.int32, m))


def complex_ops(jax, jnp, lax, np, rng):
    n = dim(rng)

    def f(z, w, x):
        c = lax.complex(x, x[::-1])
        return (z * w, z / w, jnp.abs(z), jnp.conj(z) + c, jnp.exp(z), jnp.angle(w),
                jnp.sqrt(z), jnp.real(z * c), jnp.imag(w) * x, jnp.sum(z * w, axis=1))
    z = (f32s(np, rng, 2, n) + 1j * f32s(np, rng, 2, n)).astype(np.complex64)
    return f, (z, z[::-1].copy(), f32s(np, rng, n))


def complex_matmul(jax, jnp, lax, np, rng):
    b, n, k = dim(rng, 1, 3), dim(rng, 2, 5), dim(rng, 2, 7)

    def f(z, w):
        return (jnp.einsum("bnk,bmk->bnm", z, w), z[0] @ w[0].conj().T, jnp.vdot(z, w),
                jnp.einsum("bnk,bnk->bk", z, jnp.conj(z)).real)
    z = (f32s(np, rng, b, n, k) + 1j * f32s(np, rng, b, n, k)).astype(np.complex64)
    return f, (z, (z * 1j)[:, ::-1].copy())


def dynamic_slices(jax, jnp, lax, np, rng):
    n, m = dim(rng, 4, 9), dim(rng, 4, 9)

    def f(x, i, j, v):
        return (lax.dynamic_slice(x, (i, j), (2, 3)), lax.dynamic_update_slice(x, v, (j, i)),
                x[i], lax.dynamic_slice_in_dim(x, i, 2, axis=1),
                lax.dynamic_update_index_in_dim(x, v[0], j, 0))
    return f, (f32s(np, rng, n, m), np.int32(1), np.int32(2), f32s(np, rng, 2, m))


def gather_scatter(jax, jnp, lax, np, rng):
    n, k = dim(rng, 4, 10), dim(rng, 3, 7)

    def f(x, raw, v, i):
        idx = raw % n  # in-bounds, with repeats
        return (x[idx], x.at[idx].add(v), x.at[idx].set(v), x.at[idx].max(v),
                x.at[idx].min(v), x.at[raw].set(v, mode="drop"), x.at[raw].get(mode="clip"),
                jnp.take_along_axis(x, jnp.abs(i[:, None]) % x.shape[1], axis=1),
                i.at[idx].add(raw), i.at[idx].mul(3))
    return f, (f32s(np, rng, n, 3), ints(np, rng, np.int32, k), f32s(np, rng, k, 3),
               ints(np, rng, np.int32, n))


def int_reductions(jax, jnp, lax, np, rng):
    n = dim(rng)

    def f(i, u, s, x):
        return (jnp.max(i), jnp.min(u), jnp.sum(s), jnp.prod(i, axis=0), jnp.sum(u, axis=1),
                jnp.argmax(x, axis=1), jnp.argmin(x), jnp.nanargmax(x, axis=0), jnp.all(i > 0),
                jnp.any(u == 0, axis=0), jnp.count_nonzero(s), jnp.max(x), jnp.min(x, axis=0))
    return f, (ints(np, rng, np.int32, 128, n), ints(np, rng, np.uint8, n, 4),
               ints(np, rng, np.int16, 16, n), f32s(np, rng, n, 6))


def attention_norm(jax, jnp, lax, np, rng):
    t, d = dim(rng, 3, 8), dim(rng, 4, 8)

    def f(q, k, v, g):
        s = jnp.einsum("td,sd->ts", q, k) / jnp.sqrt(jnp.float32(d))
        s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -1e9)
        o = jax.nn.softmax(s, axis=-1) @ v
        mu = o.mean(-1, keepdims=True)
        return (o - mu) * lax.rsqrt(o.var(-1, keepdims=True) + 1e-5) * g
    return f, (f32s(np, rng, t, d), f32s(np, rng, t, d), f32s(np, rng, t, d), f32s(np, rng, d))


def convert_clip(jax, jnp, lax, np, rng):
    n = dim(rng)

    def f(x, i):
        return (x.astype(jnp.int32), x.astype(jnp.uint8), i.astype(jnp.float32),
                i.astype(jnp.int8), jnp.clip(x, -0.5, 0.5), jnp.round(x), jnp.floor(x),
                jnp.sign(x), jnp.nan_to_num(x), jnp.clip(i, -100, 100),
                x.astype(jnp.bfloat16), x.astype(jnp.float16) * 3, jnp.isnan(x),
                lax.reduce_precision(x, 5, 10))
    return f, (f32s(np, rng, n), ints(np, rng, np.int32, n))


def vmap_grad(jax, jnp, lax, np, rng):
    n, d = dim(rng, 2, 5), dim(rng, 3, 6)

    def loss(w, x):
        return jnp.mean(jnp.tanh(x @ w) ** 2)

    def f(w, xs):
        per = jax.vmap(jax.grad(loss), in_axes=(None, 0))(w, xs)
        return per, jax.value_and_grad(loss)(w, xs[0]), jax.vmap(jnp.outer)(xs[:, 0], xs[:, 1])
    return f, (f32s(np, rng, d, 2), f32s(np, rng, n, 4, d))


def segments(jax, jnp, lax, np, rng):
    n, s = dim(rng, 5, 12), dim(rng, 2, 5)

    def f(x, raw):
        ids = raw % s
        return (jax.ops.segment_sum(x, ids, s), jax.ops.segment_max(x, ids, s),
                jax.nn.one_hot(ids, s), jnp.bincount(ids, length=s),
                jax.ops.segment_min(raw, ids, s))
    return f, (f32s(np, rng, n), ints(np, rng, np.int32, n))


def half_precision(jax, jnp, lax, np, rng):
    n = dim(rng, 2, 6)

    # / 4, not / 3: XLA rewrites x / c as x * (1 / c), which in f16 rounds otherwise than
    # the division the module says (measured: 1.071 vs XLA's 1.07 for c = 3)
    def f(a, b):
        ab, bb = a.astype(jnp.bfloat16), b.astype(jnp.bfloat16)
        return (jnp.dot(ab, bb, preferred_element_type=jnp.float32), ab * bb[:, 0] + 1,
                jnp.max(ab, axis=0), a.astype(jnp.float16) / 4, jnp.exp(ab))
    return f, (f32s(np, rng, n, 4), f32s(np, rng, 4, 3))
