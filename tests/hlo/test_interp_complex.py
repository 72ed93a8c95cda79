"""Complex (c64 / c128) arithmetic in the interpreter against XLA CPU: special values
(signed zeros, subnormals, inf, nan parts) and seeded random values, one oracle child."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.xla import XlaJob, run_many_on_xla

pytestmark = pytest.mark.oracle

PART = {"c64": "f32", "c128": "f64"}
EXACT_UNARY = ["negate", "abs", "sign"]
# XLA evaluates exp / log / sin / cos / atan2 / pow with its own approximations: these agree
# to a few ulp of the largest part on finite values, not bit for bit.
APPROX_UNARY = ["exponential", "log", "sqrt", "rsqrt", "tanh", "sine", "cosine"]
EXACT_BINARY = ["add", "subtract", "multiply", "divide"]
APPROX_BINARY = ["power"]


def _complex(re: np.ndarray, im: np.ndarray, t: str) -> np.ndarray:
    z = np.empty(re.shape, np.complex64 if t == "c64" else np.complex128)
    z.real, z.imag = re, im
    return z


def _special(t: str) -> np.ndarray:
    dtype = np.float32 if t == "c64" else np.float64
    tiny = 1e-40 if t == "c64" else 1e-310
    values = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -3.25, 1e-3, 100.0, -88.0, tiny,
                       np.inf, -np.inf, np.nan], dtype)
    re, im = np.meshgrid(values, values)
    return _complex(re.ravel(), im.ravel(), t)


def _random(t: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dtype = np.float32 if t == "c64" else np.float64
    scale = np.exp(rng.uniform(-4, 4, (2, n)))
    parts = (rng.standard_normal((2, n)) * scale).astype(dtype)
    return _complex(parts[0], parts[1], t)


def _inputs(t: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.concatenate([_special(t), _random(t, 200, seed)])
    y = x[np.random.default_rng(seed + 1).permutation(x.size)]
    return x, y


def _unary(op: str, t: str, n: int) -> str:
    result = PART[t] if op == "abs" else t
    return (f"HloModule m\nENTRY e {{\n  p = {t}[{n}] parameter(0)\n"
            f"  ROOT r = {result}[{n}] {op}(p)\n}}\n")


def _binary(op: str, t: str, n: int) -> str:
    return (f"HloModule m\nENTRY e {{\n  p = {t}[{n}] parameter(0)\n  q = {t}[{n}] parameter(1)\n"
            f"  ROOT r = {t}[{n}] {op}(p, q)\n}}\n")


MISC = """HloModule misc
add {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT s = c64[] add(a, b)
}
mul {
  a = c128[] parameter(0)
  b = c128[] parameter(1)
  ROOT s = c128[] multiply(a, b)
}
ENTRY e {
  p = c64[4,6] parameter(0)
  q = c64[6,3] parameter(1)
  re = f32[4,6] parameter(2)
  im = f32[4,6] parameter(3)
  d = c64[4,3] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = c64[] constant((0, 0))
  r = c64[4] reduce(p, z), dimensions={1}, to_apply=add
  w = c128[4,6] convert(p)
  one = c128[] constant((1, -0))
  m = c128[6] reduce(w, one), dimensions={0}, to_apply=mul
  c = c64[4,6] complex(re, im)
  fr = c64[4,6] convert(re)
  eq = pred[4,6] compare(p, c), direction=EQ
  ne = pred[4,6] compare(p, c), direction=NE
  k = c64[2] constant({(1.5, -2), (inf, nan)})
  s = c64[4,6] select(eq, c, fr)
  ar = c64[4,6] all-reduce(p), replica_groups={{0,1}}, to_apply=add
  wd = c128[4,3] convert(d)
  n = c64[4,3] convert(wd)
  ROOT t = (c64[4,3], c64[4], c128[6], c64[4,6], c64[4,6], pred[4,6], pred[4,6], c64[2],
            c64[4,6], c64[4,6], c64[4,3]) tuple(d, r, m, c, fr, eq, ne, k, s, ar, n)
}
"""


def _misc_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    p = _random("c64", 2 * 24, 3).reshape(2, 4, 6)
    q = _random("c64", 2 * 18, 4).reshape(2, 6, 3)
    re = np.where(rng.random((2, 4, 6)) < 0.5, p.real, rng.standard_normal((2, 4, 6)))
    im = p.imag.copy()
    re[:, 0, :3] = [np.inf, np.nan, -0.0]
    return [p, q, re.astype(np.float32), im.astype(np.float32)]


def _agree(got: np.ndarray, want: np.ndarray, ulps: float) -> np.ndarray:
    """Per element: equal parts (NaN matching NaN, signed zeros equal), or both finite and
    within `ulps` of the largest finite part of the element."""
    if got.dtype == np.bool_:
        return got == want

    def parts(a: np.ndarray) -> list[np.ndarray]:
        return [a.real, a.imag] if np.iscomplexobj(a) else [a]
    ok = np.ones(got.shape, bool)
    gp, wp = parts(got), parts(want)
    scale = np.maximum.reduce([np.where(np.isfinite(v), np.abs(v), 0) for v in gp + wp])
    spacing = np.spacing(np.maximum(scale, np.finfo(gp[0].dtype).tiny).astype(gp[0].dtype))
    for g, w in zip(gp, wp):
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        close = np.isfinite(g) & np.isfinite(w) & (np.abs(g - w) <= ulps * spacing)
        ok &= same | close
    return ok


@pytest.fixture(scope="module")
def xla_results() -> dict[str, object]:
    jobs: list[XlaJob] = []
    keys: list[str] = []
    for t in ("c64", "c128"):
        x, y = _inputs(t, 11)
        for op in EXACT_UNARY + APPROX_UNARY:
            keys.append(f"{t} {op}")
            jobs.append(XlaJob("run", _unary(op, t, x.size), [x[None]]))
        for op in EXACT_BINARY + APPROX_BINARY:
            keys.append(f"{t} {op}")
            jobs.append(XlaJob("run", _binary(op, t, x.size), [x[None], y[None]]))
    keys.append("misc")
    jobs.append(XlaJob("run", MISC, _misc_inputs(), replicas=2))
    return dict(zip(keys, run_many_on_xla(jobs)))


def _interpret(text: str, inputs: list[np.ndarray], replicas: int = 1) -> list[np.ndarray]:
    return evaluate_module(parse_module(text), inputs, replicas)


@pytest.mark.parametrize("t", ["c64", "c128"])
@pytest.mark.parametrize("op", EXACT_UNARY + EXACT_BINARY)
def test_exact_ops_match_xla_bit_for_bit_on_special_values(xla_results, t: str, op: str) -> None:
    x, y = _inputs(t, 11)
    unary = op in EXACT_UNARY
    text = _unary(op, t, x.size) if unary else _binary(op, t, x.size)
    got = _interpret(text, [x[None]] if unary else [x[None], y[None]])[0][0]
    want = xla_results[f"{t} {op}"][0][0]  # type: ignore[index]
    # divide: Smith's quotients may round in a different order than XLA's code (1 ulp)
    ok = _agree(got, want, 2 if op == "divide" else 0)
    assert ok.all(), [(x[i], y[i], got[i], want[i]) for i in np.nonzero(~ok)[0][:5]]


@pytest.mark.parametrize("t", ["c64", "c128"])
@pytest.mark.parametrize("op", APPROX_UNARY + APPROX_BINARY)
def test_transcendental_ops_match_xla_within_ulps(xla_results, t: str, op: str) -> None:
    x, y = _inputs(t, 11)
    unary = op in APPROX_UNARY
    text = _unary(op, t, x.size) if unary else _binary(op, t, x.size)
    got = _interpret(text, [x[None]] if unary else [x[None], y[None]])[0][0]
    want = xla_results[f"{t} {op}"][0][0]  # type: ignore[index]
    # power: |z|^c e^(-d arg z) magnifies the approximations' error by about |c ln|z||
    ok = _agree(got, want, 4096 if op == "power" else 64)
    # special values (inf / nan / signed zero parts) included; the few misses are the
    # cancellations and subnormal corners listed in interp_complex's docstring
    assert ok.mean() >= 0.98, [(x[i], got[i], want[i]) for i in np.nonzero(~ok)[0][:5]]
    specials = ~np.isfinite(x) if unary else ~(np.isfinite(x) & np.isfinite(y))
    assert ok[specials].all(), [(x[i], got[i], want[i]) for i in np.nonzero(specials & ~ok)[0][:5]]


def test_dot_reduce_convert_compare_select_allreduce_match_xla(xla_results) -> None:
    inputs = _misc_inputs()
    got = _interpret(MISC, inputs, replicas=2)
    want = xla_results["misc"]
    assert isinstance(want, list)
    names = ["dot", "reduce add", "reduce mul", "complex", "convert", "eq", "ne", "constant",
             "select", "all-reduce", "convert round trip"]
    for name, g, w in zip(names, got, want):
        assert g.dtype == w.dtype, name
        # dot / reduce sum in another order than XLA CPU (and the round trip of the dot)
        ulps = 16 if name in ("dot", "reduce add", "reduce mul", "convert round trip") else 0
        assert _agree(np.asarray(g), w, ulps).all(), (name, g, w)


def test_complex_refusals_name_the_op() -> None:
    text = ("HloModule m\nENTRY e {\n  p = c64[2] parameter(0)\n  q = c64[2] parameter(1)\n"
            "  ROOT r = pred[2] compare(p, q), direction=LT\n}\n")
    z = np.ones((1, 2), np.complex64)
    with pytest.raises(InterpError, match="only EQ / NE"):
        _interpret(text, [z, z])
    text = ("HloModule m\nENTRY e {\n  p = c64[2] parameter(0)\n"
            "  ROOT r = c64[2] floor(p)\n}\n")
    with pytest.raises(InterpError, match="floor on c64"):
        _interpret(text, [z])


CONVERTS = """HloModule converts
ENTRY e {
  p = pred[4] parameter(0)
  i = s32[4] parameter(1)
  h = f16[4] parameter(2)
  w = c128[4] parameter(3)
  a = c64[4] convert(p)
  b = c128[4] convert(i)
  c = c64[4] convert(h)
  d = c64[4] convert(w)
  ROOT t = (c64[4], c128[4], c64[4], c64[4]) tuple(a, b, c, d)
}
"""


def test_converts_to_complex_match_xla() -> None:
    wide = _complex(np.array([1e300, -1e-300, np.nan, 1 / 3]), np.array([-0.0, 1e40, 2.5, -np.inf]),
                    "c128")
    inputs = [np.array([[True, False, True, False]]),
              np.array([[-5, 2**31 - 1, 0, -2**31]], np.int32),
              np.array([[1.5, np.inf, np.nan, -6e-8]], np.float16), wide[None]]
    want = run_many_on_xla([XlaJob("run", CONVERTS, inputs)])[0]
    assert isinstance(want, list), want
    for g, w in zip(_interpret(CONVERTS, inputs), want):
        assert g.dtype == w.dtype and _agree(g, w, 0).all(), (g, w)
