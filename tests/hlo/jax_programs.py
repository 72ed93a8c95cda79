"""jax programs of the kinds users write, compiled at test time with XLA's dumps on
(tests/hlo/test_jax_dumps.py reads the dumps).

Contract:
- PROGRAMS: name -> Program(devices, floats, build, shard_map). `devices` is 1 for a
  one-device jit, N for a program on a mesh of N host devices (a shard_map, or a jit with
  NamedSharding arguments that XLA partitions); `floats` is how the test draws the float
  inputs it compares on (FLOAT_POLICIES); `build(jax, jnp, lax, np, rng)` returns
  (function, example arguments), the shapes drawn from `rng` (the one-device builders are
  in jax_programs_one_device.py).
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

import jax_programs_one_device as one_device
from jax_programs_one_device import dim, f32s, ints

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


# ---- programs on several devices (the one-device ones: jax_programs_one_device.py) ----

def _mesh(jax, shape, names):
    return jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Explicit,) * len(shape))


def _put(jax, x, mesh, spec):
    from jax.sharding import NamedSharding
    return jax.device_put(x, NamedSharding(mesh, spec))


def psum_small_ints(jax, jnp, lax, np, rng):
    from jax.sharding import PartitionSpec as P
    mesh = _mesh(jax, (4,), ("i",))
    n = dim(rng, 1, 4)

    def body(u, s, m):
        return (lax.psum(u, "i"), lax.psum(s, "i"), lax.psum(m, "i"), lax.pmax(u, "i"),
                lax.pmin(s, "i"), lax.psum(u[0, 0], "i")[None, None],
                lax.psum(m.astype(jnp.int32), "i"),
                lax.psum(jnp.sum(s, dtype=jnp.int32), "i")[None, None],
                lax.psum(jnp.max(u).astype(jnp.uint32), "i")[None, None])
    fn = jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    return fn, (_put(jax, ints(np, rng, np.uint8, 4 * n, 3), mesh, P("i")),
                _put(jax, ints(np, rng, np.int16, 4 * n, 2), mesh, P("i")),
                _put(jax, rng.integers(0, 2, (4 * n, 2)).astype(bool), mesh, P("i")))


def collectives(jax, jnp, lax, np, rng):
    from jax.sharding import PartitionSpec as P
    mesh = _mesh(jax, (4,), ("i",))
    n = 4 * dim(rng, 1, 3)
    ring = [(j, (j + 1) % 4) for j in range(4)]

    def body(x, i):
        return (lax.ppermute(x, "i", ring), lax.all_to_all(x, "i", 0, 0, tiled=True),
                lax.psum_scatter(x, "i", scatter_dimension=0, tiled=True),
                lax.all_gather(x, "i", tiled=True), lax.all_gather(i, "i"),
                lax.psum_scatter(i, "i", tiled=True), lax.ppermute(i, "i", [(0, 2), (2, 0)]),
                lax.pmean(x, "i"))
    fn = jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    return fn, (_put(jax, f32s(np, rng, 4 * n, 3), mesh, P("i")),
                _put(jax, ints(np, rng, np.int32, 4 * n), mesh, P("i")))


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
    return fn, (_put(jax, f32s(np, rng, 4, 32), mesh, P("x", "y")),
                _put(jax, ints(np, rng, np.int32, 2, 4 * dim(rng, 1, 3)), mesh, P("x", "y")))


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
    return fn, (_put(jax, ints(np, rng, np.int32, 8), mesh, P("d")),
                _put(jax, f32s(np, rng, 8 * dim(rng, 1, 3)), mesh, P("d")))


def sharded_mlp(jax, jnp, lax, np, rng):
    from jax.sharding import PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"),
                         axis_types=(jax.sharding.AxisType.Auto,) * 2)
    d, h = 4 * dim(rng, 1, 2), 4 * dim(rng, 1, 3)

    def loss(w, x, y):
        z = jax.nn.gelu(x @ w["w1"] + w["b1"])
        return jnp.mean(jnp.sum((z @ w["w2"] - y) ** 2, -1))

    def step(w, x, y):
        g = jax.grad(loss)(w, x, y)
        return jax.tree.map(lambda a, b: a - 0.1 * b, w, g), loss(w, x, y)
    w = {"w1": _put(jax, f32s(np, rng, d, h), mesh, P(None, "model")),
         "b1": _put(jax, f32s(np, rng, h), mesh, P("model")),
         "w2": _put(jax, f32s(np, rng, h, 3), mesh, P("model", None))}
    return step, (w, _put(jax, f32s(np, rng, 8, d), mesh, P("data")),
                  _put(jax, f32s(np, rng, 8, 3), mesh, P("data")))


def sharded_ints(jax, jnp, lax, np, rng):
    # no cumsum along the sharded axis: its partitioned form reads partition-id, which XLA
    # CPU does not run under SPMD partitioning, so that dump would have no oracle
    from jax.sharding import PartitionSpec as P
    mesh = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    n = 4 * 32 * dim(rng, 1, 2)  # a device's [n / 4, 4] has 128k elements: a scalar reduce

    def f(a, u):
        return (jnp.sum(a), jnp.max(a), jnp.max(a, axis=0), jnp.min(u),
                jnp.sum(u, axis=0, dtype=jnp.uint32), jnp.cumsum(a, axis=1), jnp.any(a < 0))
    return f, (_put(jax, ints(np, rng, np.int32, n, 4), mesh, P("i")),
               _put(jax, ints(np, rng, np.uint8, n, 2), mesh, P("i")))


PROGRAMS: dict[str, Program] = {
    "fft": Program(1, "finite", one_device.fft),
    "cumulative": Program(1, "clipped", one_device.cumulative),
    "pooling": Program(1, "clipped", one_device.pooling),
    "conv": Program(1, "clipped", one_device.conv),
    "conv_transpose": Program(1, "finite", one_device.conv_transpose),
    "bit_ops": Program(1, "full", one_device.bit_ops),
    "cond_switch": Program(1, "full", one_device.cond_switch),
    "loops": Program(1, "clipped", one_device.loops),
    "einsum_batch": Program(1, "clipped", one_device.einsum_batch),
    "sort_topk": Program(1, "full", one_device.sort_topk),
    "int_div_rem": Program(1, "full", one_device.int_div_rem),
    "random_threefry": Program(1, "full", one_device.random_threefry),
    "random_rbg": Program(1, "full", one_device.random_rbg),
    "activations": Program(1, "full", one_device.activations),
    "pad_modes": Program(1, "full", one_device.pad_modes),
    "complex_ops": Program(1, "clipped", one_device.complex_ops),
    "complex_matmul": Program(1, "finite", one_device.complex_matmul),
    "dynamic_slices": Program(1, "full", one_device.dynamic_slices),
    "gather_scatter": Program(1, "clipped", one_device.gather_scatter),
    "int_reductions": Program(1, "full", one_device.int_reductions),
    "attention_norm": Program(1, "clipped", one_device.attention_norm),
    "convert_clip": Program(1, "full", one_device.convert_clip),
    "vmap_grad": Program(1, "clipped", one_device.vmap_grad),
    "segments": Program(1, "clipped", one_device.segments),
    "half_precision": Program(1, "clipped", one_device.half_precision),
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
