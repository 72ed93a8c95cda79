"""What XLA's parser refuses beyond the grammar: one refusal per rule of
tilecc.hlo.parse_rules, and the out-of-range constants of tilecc.hlo.literal."""

from __future__ import annotations

import pytest

from tilecc.errors import ParseError
from tilecc.hlo.parser import parse_module

ASYNC = """HloModule m
wrapped {
  a = f32[2,3] parameter(0)
  ROOT n = f32[2,3] negate(a)
}
ENTRY e {
  p0 = f32[2,3] parameter(0)
  tok = token[] after-all()
  s = ((f32[2,3]), f32[2,3], s32[]) async-start(p0), calls=wrapped
  u = ((f32[2,3]), f32[2,3], s32[]) async-update(s)
  ROOT d = f32[2,3] async-done(u)
}
"""


def entry(*lines: str) -> str:
    return "HloModule m\nENTRY e {\n  p = f32[4,8] parameter(0)\n  tok = token[] after-all()\n" \
        + "".join(f"  {line}\n" for line in lines) + "}\n"


@pytest.mark.parametrize("text, line, fragment", [
    (entry("ROOT r = f32[31] reshape(p)"), 5, "(32 elements) to f32[31]{0} (31 elements)"),
    (entry("ROOT r = f32[8,<=4] dynamic-reshape(p)"), 5, "needs 2 size operands, got 0"),
    (entry("ROOT g = f32[8,8] all-gather(p), dimensions={}"), 5, "needs one dimension"),
    (entry("ROOT r = f32[10] recv(tok), channel_id=1"), 5, "recv returns a tuple"),
    (entry("ROOT r = () infeed(tok)"), 5, "non-empty tuple shape"),
    (entry("ROOT c = f32[] conditional()"), 5, "needs a branch selector"),
    (entry("ROOT c = f32[] conditional(p)"), 5, "scalar pred or s32"),
    (entry("ROOT s = ((), (), u32[]) dot-start()"), 5, "dot takes 2 operands"),
    (entry("ROOT s = ((), (), u32[]) send-start(p)"), 5, "unknown opcode 'send-start'"),
    (ASYNC.replace("((f32[2,3]), f32[2,3], s32[]) async-start",
                   "(f32[2,3], f32[2,3], s32[]) async-start"), 9, "must be ((operands...)"),
    (ASYNC.replace("async-update(s)", "async-update(p0)"), 10, "an async-start or async-upd"),
    (ASYNC.replace("u = ((f32[2,3])", "u = ((f32[9,9])"), 10, "differs from its operand's"),
    (ASYNC.replace("async-done(u)", "async-done(u), async_execution_thread=\"t\""), 11,
     "async_execution_thread to be main"),
    (ASYNC.replace("async-start(p0)", "async-start(p0, p0)").replace(
        "((f32[2,3]), f32", "((f32[2,3], f32[2,3]), f32"), 9, "its computation wrapped takes 1"),
    (entry("ROOT c = f32[4,8] custom-call(p), custom_call_target=\"x\", api_version=API_V"),
     5, "unknown custom-call api_version API_V"),
    (entry("ROOT c = f32[4,8] custom-call(p), custom_call_target=\"x\", "
           "operand_layout_constraints={f32[4,8]{0,1}, f32[2]{0}}"), 5, "1 operand layout con"),
    (entry("ROOT c = f32[4,8] custom-call(p), custom_call_target=\"x\", "
           "operand_layout_constraints={f32[8,4]{0,1}}"), 5, "does not fit the operand's"),
    (entry("ROOT e = f32[4,8] exponential(p), result_accuracy={mode=high}"), 5, "is not {mode"),
    (entry("ROOT e = f32[4,8] negate(p), result_accuracy={mode=highest}"), 5, "takes no resul"),
    (entry("ROOT a = f32[4,8] add(f32[4,8] p, f32[8,4] p)"), 5, "but 'p' is f32[4,8]"),
    (entry("ROOT b = f32[2,4,8] broadcast(p)"), 5, "of a non-scalar lacks"),
    ("HloModule m, input_output_alias={ {0, a}: (0, {0}) }\nENTRY e {\n  ROOT p = f32[] "
     "parameter(0)\n}\n", 1, "input_output_alias must read"),
    ("HloModule m, buffer_donor={ (zero, {0}) }\nENTRY e {\n  ROOT p = f32[] "
     "parameter(0)\n}\n", 1, "buffer_donor must read"),
])
def test_refused_as_xla_refuses(text: str, line: int, fragment: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_module(text)
    assert fragment in info.value.message and info.value.line == line, info.value.message


def test_the_accepted_forms_parse() -> None:
    assert parse_module(ASYNC).entry.root.operands[0].name == "u"  # type: ignore[union-attr]
    parse_module(entry("c = f32[4,8] custom-call(p), custom_call_target=\"x\", "
                       "api_version=API_VERSION_TYPED_FFI, operand_layout_constraints={f32[4,8]{0,1}}",
                       "ROOT e = f32[4,8] exponential(c), result_accuracy={tolerance={atol=0.5,ulps=2}}"))
    parse_module("HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}) }, "
                 "buffer_donor={ (0, {}) }\nENTRY e {\n  p = f32[] parameter(0)\n  q = f32[] "
                 "parameter(1)\n  ROOT t = (f32[], f32[]) tuple(p, q)\n}\n")


@pytest.mark.parametrize("literal, ok", [
    ("f16[] constant(65519)", True),  # rounds down to 65504
    ("f16[] constant(-65520)", False),  # rounds to -inf
    ("bf16[] constant(1e100)", False),
    ("f32[] constant(3.40282357e38)", False),
    ("f64[] constant(1e400)", False),
    ("c64[] constant((0, -1e39))", False),
    ("f32[] constant(-inf)", True),
    ("f32[70] constant({" + ",".join(["1"] * 69) + ",1e39})", False),  # the bulk path too
    ("u64[] constant(-1)", True),  # XLA: read as s64, the bits kept
    ("u32[] constant(-1)", False),
])
def test_constants_out_of_range(literal: str, ok: bool) -> None:
    text = f"HloModule m\nENTRY e {{\n  ROOT c = {literal}\n}}\n"
    if ok:
        value = parse_module(text).entry.root.literal  # type: ignore[union-attr]
        assert value is not None
        if literal.startswith("u64"):
            assert int(value) == 2**64 - 1
    else:
        with pytest.raises(ParseError, match="out of range"):
            parse_module(text)
