"""The interpreter's scan: to_apply along the scan dimension with carries, forward and
reverse, several inputs / carries, a result without a tuple; zero length refused as XLA CPU
does; the verifier's
scan rules (XLA's HloVerifier::HandleScan); and XLA CPU on random values."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.errors import InterpError, VerifyError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.verifier import verify_module

# out_i = x_i * c, c <- c + x_i: neither associative nor commutative
PRODUCT_OF_SUM = """HloModule m
comb {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  out = f32[] multiply(x, c)
  next = f32[] add(c, x)
  ROOT t = (f32[], f32[]) tuple(out, next)
}
ENTRY e {
  xs = f32[3] parameter(0)
  init = f32[] parameter(1)
  ROOT s = (f32[3], f32[]) scan(xs, init), dimensions={0}, num_carries=1%s, to_apply=comb
}
"""
CUMSUM_ROWS = """HloModule m
add {
  x = s32[2] parameter(0)
  c = s32[2] parameter(1)
  a = s32[2] add(x, c)
  ROOT t = (s32[2], s32[2]) tuple(a, a)
}
ENTRY e {
  xs = s32[2,3] parameter(0)
  init = s32[2] parameter(1)
  ROOT s = (s32[2,3], s32[2]) scan(xs, init), dimensions={1}, num_carries=1, to_apply=add
}
"""
SQUARES = """HloModule m
square {
  x = f32[] parameter(0)
  ROOT y = f32[] multiply(x, x)
}
ENTRY e {
  xs = f32[4] parameter(0)
  ROOT s = f32[4] scan(xs), dimensions={0}, num_carries=0, to_apply=square
}
"""
TWO_AND_TWO = """HloModule m
comb {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  hi = f32[] parameter(2)
  total = f32[] parameter(3)
  out = f32[] subtract(a, b)
  m = f32[] maximum(hi, a)
  t2 = f32[] add(total, b)
  ROOT t = (f32[], f32[], f32[]) tuple(out, m, t2)
}
ENTRY e {
  as = f32[4] parameter(0)
  bs = f32[4] parameter(1)
  hi0 = f32[] parameter(2)
  total0 = f32[] parameter(3)
  ROOT s = (f32[4], f32[], f32[]) scan(as, bs, hi0, total0), dimensions={0},
    num_carries=2, is_associative=false, to_apply=comb
}
"""
EMPTY = """HloModule m
add {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  a = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(a, a)
}
ENTRY e {
  xs = f32[0] parameter(0)
  init = f32[] parameter(1)
  ROOT s = (f32[0], f32[]) scan(xs, init), dimensions={0}, num_carries=1, to_apply=add
}
"""


def run(text: str, *args: object, replicas: int = 1) -> list[np.ndarray]:
    module = parse_module(text)
    verify_module(module)
    inputs = [np.asarray(x)[None] if replicas == 1 else np.asarray(x) for x in args]
    return evaluate_module(module, inputs, replicas)


def f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


def test_forward_scan_carries_from_each_step_to_the_next() -> None:
    outs, carry = run(PRODUCT_OF_SUM % "", f32(1, 2, 3), np.float32(1))
    assert outs[0].tolist() == [1, 4, 12] and carry[0] == 7  # c: 1, 2, 4, 7


def test_reverse_scan_starts_at_the_end() -> None:
    outs, carry = run(PRODUCT_OF_SUM % ", is_reverse=true", f32(1, 2, 3), np.float32(1))
    assert outs[0].tolist() == [6, 8, 3] and carry[0] == 7  # c: 1, 4, 6, 7


def test_associative_hint_does_not_change_the_result() -> None:
    outs, _ = run(PRODUCT_OF_SUM % ", is_associative=true", f32(1, 2, 3), np.float32(1))
    assert outs[0].tolist() == [1, 4, 12]


def test_scan_along_an_inner_dimension_with_a_vector_carry() -> None:
    outs, carry = run(CUMSUM_ROWS, np.array([[1, 2, 3], [4, 5, 6]], np.int32),
                      np.array([10, 0], np.int32))
    assert outs[0].tolist() == [[11, 13, 16], [4, 9, 15]] and carry[0].tolist() == [16, 15]


def test_scan_without_carries_gives_its_one_output() -> None:
    (out,) = run(SQUARES, f32(1, -2, 3, 0.5))
    assert out[0].tolist() == [1, 4, 9, 0.25]


def test_several_inputs_and_carries() -> None:
    outs, hi, total = run(TWO_AND_TWO, f32(1, 5, 2, 7), f32(1, 1, 2, 3), np.float32(0),
                          np.float32(100))
    assert outs[0].tolist() == [0, 4, 0, 4] and hi[0] == 7 and total[0] == 107


def test_zero_length_scan_is_refused() -> None:
    # XLA's verifier accepts it; XLA CPU does not compile it (test_scan_equals_xla...)
    with pytest.raises(InterpError, match=r"s \(scan\): a scan of length 0 \(dimension 0\), "
                                          "which XLA CPU does not compile"):
        run(EMPTY, np.zeros(0, np.float32), np.float32(5))


def test_each_replica_scans_its_own_values() -> None:
    outs, carry = run(CUMSUM_ROWS, np.array([[[1, 1, 1], [0, 0, 0]], [[2, 0, 2], [1, 2, 3]]],
                                            np.int32),
                      np.zeros((2, 2), np.int32), replicas=2)
    assert outs.tolist() == [[[1, 2, 3], [0, 0, 0]], [[2, 2, 4], [1, 3, 6]]]
    assert carry.tolist() == [[3, 0], [4, 6]]


BAD = [  # (edit of PRODUCT_OF_SUM % "", what the verifier says)
    (("dimensions={0}", "dimensions={0,1}"), r"dimensions=\{0,1\} must name one dimension"),
    (("num_carries=1", "num_carries=3"), r"num_carries=3 is more than the 2 operands"),
    (("num_carries=1", "num_carries=x"), r"num_carries=x must be a count"),
    (("dimensions={0}", "dimensions={1}"), r"scan dimension 1 is out of range"),
    (("(f32[3], f32[]) scan", "(f32[2], f32[]) scan"),
     r"inputs and outputs disagree on the size of scan dimension 0"),
    (("init = f32[] parameter(1)", "init = f32[2] parameter(1)"),
     r"comb parameter 1 is f32\[\]\S*, expected f32\[2\]"),
    (("tuple(out, next)", "tuple(out, out, next)"), r"comb gives 3 values for 2 results"),
    (("num_carries=1", "num_carries=1, is_reverse=yes"), r"is_reverse=yes must be true or false"),
]


@pytest.mark.parametrize("edit, message", BAD)
def test_verifier_refuses_a_malformed_scan(edit: tuple[str, str], message: str) -> None:
    text = PRODUCT_OF_SUM % ""
    assert edit[0] in text
    if "out, out, next" in edit[1]:
        text = text.replace("ROOT t = (f32[], f32[])", "ROOT t = (f32[], f32[], f32[])")
    module = parse_module(text.replace(edit[0], edit[1]))
    with pytest.raises(VerifyError, match=r"^e/s \(scan\): " + message):
        verify_module(module)
    with pytest.raises(InterpError, match=r"^s \(scan\): " + message):
        evaluate_module(module, random_inputs(module, 1, 0), 1)


@pytest.mark.oracle
def test_scan_equals_xla_on_random_values() -> None:
    pytest.importorskip("jax")
    from tilecc.hlo.xla import XlaJob, run_many_on_xla
    texts = [PRODUCT_OF_SUM % "", PRODUCT_OF_SUM % ", is_reverse=true",
             PRODUCT_OF_SUM % ", is_reverse=true, is_associative=true", CUMSUM_ROWS, SQUARES,
             TWO_AND_TWO, CUMSUM_ROWS.replace("num_carries=1", "num_carries=1, is_reverse=true")]
    cases = [(text, random_inputs(parse_module(text), 1, seed)) for seed, text in
             enumerate(texts + [EMPTY])]
    *results, empty = run_many_on_xla([XlaJob("run", text, x) for text, x in cases])
    assert not isinstance(empty, list), "XLA CPU now runs a scan of length 0"
    for (text, x), want in zip(cases, results):
        assert isinstance(want, list), want
        got = evaluate_module(parse_module(text), x, 1)
        assert len(got) == len(want)
        for g, w in zip(got, want):  # one rounding per step, in XLA's order: bit for bit
            np.testing.assert_array_equal(g, w, err_msg=text)
