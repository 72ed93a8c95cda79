"""Interpreter against XLA on small hand-written modules in forms jax programs produce and
the fixtures did not: bitcast-convert between widths (jax.random's rbg keys,
lax.bitcast_convert_type), reduce-precision (checkpoint policies), mesh replica groups with
a device order (auto-partitioned jit), host offloading's memory-space annotations."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import XlaJob, run_many_on_xla

pytestmark = pytest.mark.oracle

CASES: dict[str, tuple[str, int, int]] = {}  # name -> (text, replicas, partitions)
RTOL = {"erf": 4e-7}  # float results compare exactly except these (XLA's erf polynomial)

CASES["bitcast-convert between widths"] = ("""HloModule bc
ENTRY e {
  a = u32[3,2] parameter(0)
  f = f32[5] parameter(1)
  b = u8[8] parameter(2)
  s = s64[] parameter(3)
  bytes = u8[3,2,4] bitcast-convert(a)
  halves = u16[5,2] bitcast-convert(f)
  back = f32[5] bitcast-convert(halves)
  pairs = u8[4,2] reshape(b)
  wide = s16[4] bitcast-convert(pairs)
  words = u32[2] bitcast-convert(s)
  bf = bf16[5,2] bitcast-convert(f)
  ROOT t = (u8[3,2,4], u16[5,2], f32[5], s16[4], u32[2], bf16[5,2]) tuple(bytes, halves, back, wide, words, bf)
}
""", 1, 1)

# jnp.argmax's reducer keeps its left operand when both values are NaN, so only an
# order-keeping reduction finds the first NaN as XLA CPU's left-to-right loop does; the
# inputs hold about ten NaNs per row.
CASES["argmax with several NaNs"] = ("""HloModule am
argmax {
  a = f32[] parameter(0)
  b = f32[] parameter(2)
  gt = pred[] compare(a, b), direction=GT
  isnan = pred[] compare(a, a), direction=NE
  pick = pred[] or(gt, isnan)
  v = f32[] select(pick, a, b)
  eq = pred[] compare(a, b), direction=EQ
  ai = s32[] parameter(1)
  bi = s32[] parameter(3)
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  first = pred[] or(pick, tie)
  i = s32[] select(first, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[512] parameter(0)
  y = f32[3,200] parameter(1)
  ix = s32[512] iota(), iota_dimension=0
  iy = s32[3,200] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[], s32[]) reduce(x, ix, ninf, zero), dimensions={0}, to_apply=argmax
  rows = (f32[3], s32[3]) reduce(y, iy, ninf, zero), dimensions={1}, to_apply=argmax
  ri = s32[] get-tuple-element(r), index=1
  rr = s32[3] get-tuple-element(rows), index=1
  ROOT t = (s32[], s32[3]) tuple(ri, rr)
}
""", 2, 1)

# jax.checkpoint policies wrap saved values in reduce-precision (often a no-op 8 / 23 on
# f32); narrower targets round the mantissa, overflow to inf and flush small values.
CASES["reduce-precision"] = ("""HloModule rp
ENTRY e {
  x = f32[64] parameter(0)
  h = f16[64] parameter(1)
  b = bf16[64] parameter(2)
  d = f64[64] parameter(3)
  same = f32[64] reduce-precision(x), exponent_bits=8, mantissa_bits=23
  half = f32[64] reduce-precision(x), exponent_bits=5, mantissa_bits=10
  tiny = f32[64] reduce-precision(x), exponent_bits=2, mantissa_bits=0
  bfl = f32[64] reduce-precision(x), exponent_bits=8, mantissa_bits=7
  hh = f16[64] reduce-precision(h), exponent_bits=4, mantissa_bits=3
  bb = bf16[64] reduce-precision(b), exponent_bits=5, mantissa_bits=2
  dd = f64[64] reduce-precision(d), exponent_bits=8, mantissa_bits=23
  ROOT t = (f32[64], f32[64], f32[64], f32[64], f16[64], bf16[64], f64[64]) tuple(same, half, tiny, bfl, hh, bb, dd)
}
""", 2, 1)

# lax.reduce_window with base / window dilation, negative padding, and the variadic
# max-pool-with-argmax XLA CPU's optimizer writes for the gradient of a max pool.
CASES["reduce-window dilations and variadic"] = ("""HloModule rw
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
mins {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] minimum(a, b)
}
argmax {
  a = f32[] parameter(0)
  b = f32[] parameter(2)
  ge = pred[] compare(a, b), direction=GE
  isnan = pred[] compare(a, a), direction=NE
  pick = pred[] or(ge, isnan)
  v = f32[] select(pick, a, b)
  ai = s32[] parameter(1)
  bi = s32[] parameter(3)
  i = s32[] select(pick, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[2,7,6,3] parameter(0)
  i = s32[5,4] parameter(1)
  zero = f32[] constant(0)
  big = s32[] constant(2147483647)
  ninf = f32[] constant(-inf)
  izero = s32[] constant(0)
  base = f32[2,6,10,3] reduce-window(x, zero), window={size=1x2x2x1 pad=0_0x0_0x0_0x0_0 lhs_dilate=1x1x2x1}, to_apply=add
  wdil = f32[2,5,4,3] reduce-window(x, zero), window={size=1x2x2x1 rhs_dilate=1x3x3x1 pad=0_0x1_0x1_0x0_0}, to_apply=add
  neg = s32[2,2] reduce-window(i, big), window={size=2x2 stride=2x1 pad=-1_0x0_-1}, to_apply=mins
  pos = s32[2,7,6,3] iota(), iota_dimension=1
  pool = (f32[2,3,3,3], s32[2,3,3,3]) reduce-window(x, pos, ninf, izero), window={size=1x3x2x1 stride=1x2x2x1}, to_apply=argmax
  pv = f32[2,3,3,3] get-tuple-element(pool), index=0
  pi = s32[2,3,3,3] get-tuple-element(pool), index=1
  ROOT t = (f32[2,6,10,3], f32[2,5,4,3], s32[2,2], f32[2,3,3,3], s32[2,3,3,3]) tuple(base, wdil, neg, pv, pi)
}
""", 1, 1)

# jax.nn.gelu(approximate=False) and jax.scipy.special.erf lower to the erf opcode.
CASES["erf"] = ("""HloModule erf
ENTRY e {
  x = f32[256] parameter(0)
  h = bf16[64] parameter(1)
  d = f64[64] parameter(2)
  one = f32[] constant(1)
  ones = f32[256] broadcast(one), dimensions={}
  sixteen = f32[] constant(16)
  scale = f32[256] broadcast(sixteen), dimensions={}
  r = f32[256] remainder(x, scale)
  near = f32[256] multiply(r, ones)
  ex = f32[256] erf(x)
  en = f32[256] erf(near)
  eh = bf16[64] erf(h)
  ed = f64[64] erf(d)
  ROOT t = (f32[256], f32[256], bf16[64], f64[64]) tuple(ex, en, eh, ed)
}
""", 1, 1)

# A plain jit with NamedSharding arguments, lowered before partitioning: its sharding
# annotations are custom calls XLA CPU runs as the identity on one device.
CASES["sharding annotations"] = ("""HloModule jit_prog
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT z = s32[] add(x, y)
}
ENTRY main {
  a = s32[8,16] parameter(0), sharding={devices=[2,4]<=[8]}
  s = s32[8,16] custom-call(a), custom_call_target="Sharding", sharding={devices=[2,4]<=[8]}
  b = s32[8,16] custom-call(s), custom_call_target="xla.sdy.PropagationBarrier"
  zero = s32[] constant(0)
  r = s32[16] reduce(b, zero), dimensions={0}, to_apply=add
  ROOT out = s32[16] custom-call(r), custom_call_target="Sharding", sharding={replicated}
}
""", 1, 1)

# Host offloading (jax.device_put to a memory kind, remat offload policies): memory-space
# annotations XLA CPU runs as the identity, whatever their frontend attributes.
CASES["host offloading annotations"] = ("""HloModule offload
ENTRY e {
  x = f32[4,8] parameter(0)
  i = s32[6] parameter(1)
  h = f32[4,8] custom-call(x), custom_call_target="MoveToHost"
  u = f32[4,8] add(h, h)
  d = f32[4,8] custom-call(u), custom_call_target="MoveToDevice"
  p = s32[6] custom-call(i), custom_call_target="annotate_device_placement",
    frontend_attributes={_xla_buffer_placement="pinned_host"}
  q = s32[6] negate(p)
  ROOT t = (f32[4,8], s32[6], f32[4,8]) tuple(d, q, h)
}
""", 1, 1)

# XLA CPU's optimized complex programs split c64 values with real / imag; of a float they
# are the value and zero.
CASES["real and imag"] = ("""HloModule ri
ENTRY e {
  x = f32[16] parameter(0)
  z = c64[16] parameter(1)
  w = c128[4] parameter(2)
  xr = f32[16] real(x)
  xi = f32[16] imag(x)
  zr = f32[16] real(z)
  zi = f32[16] imag(z)
  wi = f64[4] imag(w)
  ROOT t = (f32[16], f32[16], f32[16], f32[16], f64[4]) tuple(xr, xi, zr, zi, wi)
}
""", 1, 1)


def _inputs(name: str) -> list[np.ndarray]:
    text, replicas, partitions = CASES[name]
    return random_inputs(parse_module(text), replicas, 7, partitions)


@pytest.fixture(scope="module")
def xla_outputs() -> dict[str, object]:
    jobs = [XlaJob("run", text, _inputs(name), replicas, partitions)
            for name, (text, replicas, partitions) in CASES.items()]
    return dict(zip(CASES, run_many_on_xla(jobs)))


@pytest.mark.parametrize("name", list(CASES))
def test_interpreter_matches_xla(name: str, xla_outputs: dict[str, object]) -> None:
    text, replicas, partitions = CASES[name]
    got = evaluate_module(parse_module(text), _inputs(name), replicas, partitions)
    want = xla_outputs[name]
    if isinstance(want, Exception):
        raise want
    assert isinstance(want, list) and len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, f"{name} out{k}"
        if g.dtype.kind == "f" or g.dtype.kind == "V":
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                       rtol=RTOL.get(name, 0.0), atol=0.0, equal_nan=True,
                                       err_msg=f"{name} out{k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{name} out{k}")


def test_bitcast_convert_byte_order() -> None:
    """Least significant byte first (little-endian memory order), as XLA CPU gives."""
    module = parse_module("""HloModule b
ENTRY e {
  a = u32[] parameter(0)
  ROOT b = u8[4] bitcast-convert(a)
}
""")
    (out,) = evaluate_module(module, [np.array([0x01020304], np.uint32)], 1)
    assert out.tolist() == [[4, 3, 2, 1]]


def test_bitcast_may_change_the_element_type() -> None:
    """XLA CPU's optimized sort of bf16 keys bitcasts them to s16 (same bytes); a bitcast
    whose byte counts differ is refused with both shapes named."""
    module = parse_module("""HloModule b
ENTRY e {
  a = bf16[2,3]{0,1} parameter(0)
  ROOT b = s16[3,2]{1,0} bitcast(a)
}
""")
    values = np.array([[1.0, -2.0, 0.5], [np.inf, -0.0, 3.0]], ml_dtypes.bfloat16)
    (out,) = evaluate_module(module, [values[None]], 1)
    # layout {0,1}: dimension 0 is minor, so the bytes run down the columns
    np.testing.assert_array_equal(out[0], values.T.view(np.int16))
    bad = parse_module("""HloModule b
ENTRY e {
  a = bf16[2,3] parameter(0)
  ROOT b = s32[2,3] bitcast(a)
}
""")
    with pytest.raises(InterpError, match=r"bitcast between bf16\[2,3\].* and s32\[2,3\]"):
        evaluate_module(bad, [np.zeros((1, 2, 3), ml_dtypes.bfloat16)], 1)


def test_shape_changing_sharding_marker_is_refused_with_the_dump_to_use() -> None:
    module = parse_module("""HloModule m
ENTRY e {
  a = s32[8] parameter(0)
  ROOT s = s32[2] custom-call(a), custom_call_target="SPMDFullToShardShape"
}
""")
    with pytest.raises(InterpError, match=r"opcode custom-call is not supported .*"
                                          r"SPMDFullToShardShape.*spmd-partitioner"):
        evaluate_module(module, [np.zeros((1, 8), np.int32)], 1)



def test_offloading_annotation_that_changes_the_shape_is_refused() -> None:
    module = parse_module("""HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  ROOT h = f32[2,4] custom-call(a), custom_call_target="MoveToHost"
}
""")
    with pytest.raises(InterpError, match=r"h: opcode custom-call is not supported by the "
                                          r"interpreter \(custom_call_target=MoveToHost\)"):
        evaluate_module(module, [np.zeros((1, 8), np.float32)], 1)
