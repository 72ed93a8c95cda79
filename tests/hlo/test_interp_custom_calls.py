"""The custom calls the interpreter runs besides TopK (test_interp_async_topk): the
annotations XLA CPU runs as the identity, arrays and tuples, `LayoutConstraint` among them,
and XLA's `control_dep` marker; the refusals of the forms XLA CPU does not run either, or
whose value it does not fix (GetRngSeed: a fresh seed each run)."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module

X = np.arange(6, dtype=np.float32).reshape(1, 2, 3) - 2.5
Y = np.arange(6, dtype=np.int32).reshape(1, 2, 3) + 100


def module(body: str) -> str:
    return ("HloModule m\nENTRY e {\n  x = f32[2,3] parameter(0)\n  y = s32[2,3] parameter(1)\n"
            f"{body}}}\n")


LAYOUT = module('  ROOT c = f32[2,3]{0,1} custom-call(x), custom_call_target="LayoutConstraint", '
                "operand_layout_constraints={f32[2,3]{0,1}}\n")


def tuple_identity(target: str) -> str:
    return module("  t = (f32[2,3], s32[2,3]) tuple(x, y)\n"
                  f'  ROOT c = (f32[2,3], s32[2,3]) custom-call(t), custom_call_target="{target}"'
                  "\n")


CONTROL_DEP = module('  cd = () custom-call(x, y), custom_call_target="control_dep"\n'
                     "  ROOT r = f32[2,3] negate(x)\n")
CONTROL_DEP_ROOT = module('  ROOT cd = () custom-call(x, y), custom_call_target="control_dep"\n')

# (module, the outputs XLA CPU gives for inputs X, Y: measured, jaxlib 0.10.2)
GOLDEN = [
    (LAYOUT, [X]),
    (tuple_identity("LayoutConstraint"), [X, Y]),
    (tuple_identity("ShardBarrierFrom"), [X, Y]),
    (tuple_identity("ShardBarrierTo"), [X, Y]),
    (tuple_identity("MoveToHost"), [X, Y]),
    (CONTROL_DEP, [-X]),
]


def outputs(text: str) -> list[np.ndarray]:
    got = evaluate_module(parse_module(text), [X, Y], 1)
    return list(got) if isinstance(got, (list, tuple)) else [got]


@pytest.mark.parametrize("text, want", GOLDEN)
def test_custom_call_gives_xla_cpus_values(text: str, want: list[np.ndarray]) -> None:
    got = outputs(text)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_a_root_control_dep_gives_no_output() -> None:
    assert outputs(CONTROL_DEP_ROOT) == []  # XLA CPU's answer: an empty output list


REFUSED = [  # (module, words of the refusal)
    # XLA CPU: RET_CHECK "instruction cd is live and cannot be removed"
    (module('  cd = f32[2,3] custom-call(x, y), custom_call_target="control_dep"\n'
            "  ROOT r = f32[2,3] negate(cd)\n"), "control_dep takes two operands"),
    (module('  cd = () custom-call(x, y), custom_call_target="control_dep"\n'
            "  ROOT r = ((), f32[2,3]) tuple(cd, x)\n"), "used by r"),
    # XLA CPU: Check failed: instruction->operand_count() == 2 (1 vs. 2)
    (module('  cd = () custom-call(x), custom_call_target="control_dep"\n'
            "  ROOT r = f32[2,3] negate(x)\n"), r"of 1 operand\(s\)"),
    # the identity only when the result has the operand's shape
    (module('  ROOT c = f32[3,2] custom-call(x), custom_call_target="LayoutConstraint"\n'),
     "custom_call_target=LayoutConstraint"),
    (module("  t = (f32[2,3], s32[2,3]) tuple(x, y)\n"
            '  ROOT c = (s32[2,3], f32[2,3]) custom-call(t), custom_call_target="MoveToHost"\n'),
     "custom_call_target=MoveToHost"),
    (module('  ROOT c = u64[] custom-call(), custom_call_target="GetRngSeed"\n'),
     "custom_call_target=GetRngSeed"),
]


@pytest.mark.parametrize("text, words", REFUSED)
def test_custom_call_refusal(text: str, words: str) -> None:
    with pytest.raises(InterpError, match=words):
        outputs(text)


@pytest.mark.oracle
def test_custom_calls_equal_xla() -> None:
    pytest.importorskip("jax")
    from tilecc.hlo.xla import XlaJob, run_many_on_xla
    texts = [text for text, _ in GOLDEN] + [CONTROL_DEP_ROOT]
    results = run_many_on_xla([XlaJob("run", text, [X, Y], 1) for text in texts])
    for text, want in zip(texts, results):
        assert isinstance(want, list), want
        got = outputs(text)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
