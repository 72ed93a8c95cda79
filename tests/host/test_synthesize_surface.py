"""Goldens of SynthesizeAllReduceSignals on pypto surface details: where the bindings go
next to `pl.func_attr` and a docstring, core_num given by module constants, names used
only in signatures, module-level functions, and lineage of non-variable data
(reference/pld.md). Source in -> source out after Python-ast normalisation, with the
print -> parse round-trip check on."""

from __future__ import annotations

import pytest

from tilecc.cli import main
from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.passes.synthesize_allreduce_signals import SynthesizeAllReduceSignals

from .conftest import CHIP, HEADER, assert_same_source, host_program, sig, synthesize, synthesized_source


def test_bindings_go_after_the_docstring_and_a_leading_func_attr():
    before = host_program('''\
        """Docstring."""
        # about the attributes
        pl.func_attr({"x": 1})
        # leading comment of the first user statement
        p = pld.tensor.allreduce(p)
        return p
''', params="self, p: pld.DistributedTensor[[256], pl.FP32]")
    after = host_program('''\
        """Docstring."""
        # about the attributes
        pl.func_attr({"x": 1})
''' + sig(0) + '''\
        # leading comment of the first user statement
        p = pld.tensor.allreduce(p, __allreduce_signal_0)
        return p
''', params="self, p: pld.DistributedTensor[[256], pl.FP32]")
    assert_same_source(synthesized_source(before), after)
    func = synthesize(before).programs[0].function("host_orch")
    assert func.doc == "Docstring." and isinstance(func.body[1], ir.ExprStmt)


def test_func_attr_that_is_not_first_is_a_user_statement():
    before = host_program('''\
        p = pld.tensor.allreduce(p)
        pl.func_attr({"x": 1})
        return p
''', params="self, p: pld.DistributedTensor[[256], pl.FP32]")
    after = host_program(sig(0) + '''\
        p = pld.tensor.allreduce(p, __allreduce_signal_0)
        pl.func_attr({"x": 1})
        return p
''', params="self, p: pld.DistributedTensor[[256], pl.FP32]")
    assert_same_source(synthesized_source(before), after)


def test_core_num_from_module_constants_and_constant_expressions():
    program = "@pl.program\nclass P:\n" + CHIP + """\
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, d: pld.DistributedTensor[[256], pl.FP32], e: pld.DistributedTensor[[256], pl.FP32]):
"""
    before = HEADER + "CORES = 4\nLANES: int = CORES + 1\n\n" + program + """\
        d = pld.tensor.allreduce(d, core_num=CORES)
        d = pld.tensor.allreduce(d, core_num=2 * 3)
        e = pld.tensor.allreduce(e, core_num=LANES)
        return d
"""
    after = HEADER + "CORES = 4\nLANES: int = CORES + 1\n\n" + program + sig(0, core_num=6) + sig(1, core_num=5) + """\
        d = pld.tensor.allreduce(d, __allreduce_signal_0, core_num=CORES)
        d = pld.tensor.allreduce(d, __allreduce_signal_0, core_num=2 * 3)
        e = pld.tensor.allreduce(e, __allreduce_signal_1, core_num=LANES)
        return d
"""
    assert_same_source(synthesized_source(before), after)


def test_module_constant_is_seen_from_a_builder_that_does_not_shadow_it():
    before = HEADER + """\
CORES = 2


def build(n):
    @pl.program
    class P:
        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(self, d: pld.DistributedTensor[[256], pl.FP32]):
            d = pld.tensor.allreduce(d, core_num=CORES * 2)
            return d
    return P
"""
    func = synthesize(before).programs[0].function("host_orch")
    assert func.body[1].value.args[0].left.right == ir.Const(4)   # world_size * 4 * INT32 bytes
    assert func.body[3].value.args[1] == ir.Var("__allreduce_signal_0")


def test_names_used_only_in_signatures_are_reserved():
    source = HEADER + "@pl.program\nclass P:\n" + """\
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pl.Tensor[[__allreduce_signal_0], pl.FP32]) -> pl.Tensor[[__allreduce_signal_world_size_1], pl.FP32]:
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, d: pld.DistributedTensor[[256], pl.FP32], n: pl.Scalar[pl.INT64] = __allreduce_signal_buf_2):
"""
    before = source + "        d = pld.tensor.allreduce(d)\n        return d\n"
    after = source + sig(3) + "        d = pld.tensor.allreduce(d, __allreduce_signal_3)\n        return d\n"
    assert_same_source(synthesized_source(before), after)


def test_module_level_host_orchestrator_is_not_rewritten():
    # pypto's pass runs over a program's functions; a module-level @pl.function is not one
    source = HEADER + """\
@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
def host(d: pld.DistributedTensor[[256], pl.FP32]):
    d = pld.tensor.allreduce(d)
    return d
"""
    module = parse_module(source)
    assert SynthesizeAllReduceSignals().run_module(module) is module
    assert_same_source(synthesized_source(source), source)


def test_host_opt_help_says_module_level_functions_are_left_alone(capsys):
    with pytest.raises(SystemExit):
        main(["host-opt", "--help"])
    squeezed = "".join(capsys.readouterr().out.split())   # argparse wraps lines anywhere
    assert "amodule-level@pl.functionoutsideanyprogramclassisleftunchanged" in squeezed


def signals_of(source: str) -> list[str]:
    """The signal of every allreduce assignment of host_orch, in visit order."""
    func = synthesize(source).programs[0].function("host_orch")
    return [s.value.args[1].name for s in ir.walk_stmts(func.body)
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "pld.tensor.allreduce"]


def test_result_of_an_allreduce_over_a_non_variable_is_its_own_root():
    before = host_program("""\
        buf = pld.alloc_window_buffer(1024)
        e = pld.tensor.allreduce(pld.window(buf, [256], dtype=pl.FP32))
        e = pld.tensor.allreduce(e)
        d = pld.window(buf, [256], dtype=pl.FP32)
        d = pld.tensor.allreduce(d)
        return d
""")
    after = host_program(sig(0) + sig(1) + sig(2) + """\
        buf = pld.tensor.alloc_window_buffer(1024)
        e = pld.tensor.allreduce(pld.tensor.window(buf, [256], dtype=pl.FP32), __allreduce_signal_0)
        e = pld.tensor.allreduce(e, __allreduce_signal_1)
        d = pld.tensor.window(buf, [256], dtype=pl.FP32)
        d = pld.tensor.allreduce(d, __allreduce_signal_2)
        return d
""")
    assert_same_source(synthesized_source(before), after)


def test_loop_carried_values_still_lead_to_their_initial_value():
    # the documented choice kept: acc leads to d (buf) in the first loop, to p in the second
    source = host_program("""\
        buf = pld.alloc_window_buffer(1024)
        d = pld.window(buf, [256], dtype=pl.FP32)
        for i, (acc,) in pl.range(3, init_values=(d,)):
            acc2 = pld.tensor.allreduce(acc)
            out = pl.yield_(acc2)
        e = pld.tensor.allreduce(out)
        f = pld.tensor.allreduce(d)
        for i, (acc,) in pl.range(3, init_values=(p,)):
            acc3 = pld.tensor.allreduce(acc)
            out2 = pl.yield_(acc3)
        g = pld.tensor.allreduce(out2)
        return p
""", params="self, p: pld.DistributedTensor[[256], pl.FP32]")
    assert signals_of(source) == ["__allreduce_signal_0"] * 3 + ["__allreduce_signal_1"] * 2
