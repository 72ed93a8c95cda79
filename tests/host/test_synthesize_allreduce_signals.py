"""Golden tests of SynthesizeAllReduceSignals (spec 002, reference/pld.md): source in ->
source out, compared after Python-ast normalisation; every run also checks the
print -> parse round trip (PassPipeline verification mode)."""

from __future__ import annotations

import pytest

from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.passes.synthesize_allreduce_signals import (
    AllReduceSignalError, SynthesizeAllReduceSignals, synthesize_allreduce_signals)
from tilecc.host.printer import print_module

from .conftest import CHIP, HEADER, assert_same_source, host_program, sig, synthesize, synthesized_source

PROLOGUE = """\
        data_buf = pld.alloc_window_buffer(1024)
        data = pld.window(data_buf, [256], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.chip_orch(data, device=r)
"""
PROLOGUE_OUT = """\
        data_buf = pld.tensor.alloc_window_buffer(1024)
        data = pld.tensor.window(data_buf, [256], dtype=pl.FP32)
        for r in pl.range(pld.system.world_size()):
            self.chip_orch(data, device=r)
"""


def test_single_implicit_call():
    before = host_program(PROLOGUE + "        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)\n"
                                     "        return data\n")
    after = host_program(sig(0) + PROLOGUE_OUT +
                         "        data = pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum)\n"
                         "        return data\n")
    assert_same_source(synthesized_source(before), after)


def test_two_calls_on_one_buffer_share_one_signal():
    before = host_program(PROLOGUE + "        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)\n"
                                     "        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Max)\n"
                                     "        return data\n")
    after = host_program(sig(0) + PROLOGUE_OUT +
                         "        data = pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum)\n"
                         "        data = pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Max)\n"
                         "        return data\n")
    assert_same_source(synthesized_source(before), after)


def test_two_buffers_get_two_signals_numbered_by_first_appearance():
    # b is allocated first but reduced second: numbering follows the first allreduce.
    before = host_program("""\
        b_buf = pld.alloc_window_buffer(1024)
        a_buf = pld.alloc_window_buffer(1024)
        b = pld.window(b_buf, [256], dtype=pl.FP32)
        a = pld.window(a_buf, [256], dtype=pl.FP32)
        a = pld.tensor.allreduce(a, op=pld.ReduceOp.Sum)
        b = pld.tensor.allreduce(b, op=pld.ReduceOp.Sum)
        a = pld.tensor.allreduce(a, op=pld.ReduceOp.Sum)
        return a
""")
    after = host_program(sig(0) + sig(1) + """\
        b_buf = pld.tensor.alloc_window_buffer(1024)
        a_buf = pld.tensor.alloc_window_buffer(1024)
        b = pld.tensor.window(b_buf, [256], dtype=pl.FP32)
        a = pld.tensor.window(a_buf, [256], dtype=pl.FP32)
        a = pld.tensor.allreduce(a, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        b = pld.tensor.allreduce(b, __allreduce_signal_1, op=pld.ReduceOp.Sum)
        a = pld.tensor.allreduce(a, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        return a
""")
    assert_same_source(synthesized_source(before), after)


def test_core_num_widens_to_the_group_maximum():
    before = host_program(PROLOGUE + """\
        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum, core_num=2)
        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum, core_num=8)
        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
        return data
""")
    after = host_program(sig(0, core_num=8) + PROLOGUE_OUT + """\
        data = pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum, core_num=2)
        data = pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum, core_num=8)
        data = pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        return data
""")
    assert_same_source(synthesized_source(before), after)


def test_calls_in_for_and_while_loops_keep_the_signal_outside():
    before = host_program(PROLOGUE + """\
        for _ in pl.range(2):
            data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum, mode="mesh")
        i = 0
        while i < 3:
            if i == 1:
                pld.tensor.allreduce(data, op=pld.ReduceOp.Max)
            i = i + 1
        return data
""")
    after = host_program(sig(0) + PROLOGUE_OUT + """\
        for _ in pl.range(2):
            data = pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum, mode="mesh")
        i = 0
        while i < 3:
            if i == 1:
                pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Max)
            i = i + 1
        return data
""")
    assert_same_source(synthesized_source(before), after)


def test_expression_statement():
    before = host_program(PROLOGUE + "        pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)\n        return 0\n")
    after = host_program(sig(0) + PROLOGUE_OUT +
                         "        pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum)\n"
                         "        return 0\n")
    assert_same_source(synthesized_source(before), after)


def test_explicit_signal_is_kept_and_program_unchanged():
    source = host_program("""\
        data_buf = pld.alloc_window_buffer(1024)
        signal_buf = pld.alloc_window_buffer(16)
        data = pld.window(data_buf, [256], dtype=pl.FP32)
        signal = pld.window(signal_buf, [pld.world_size(), 1], dtype=pl.INT32)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        return data
""")
    program = parse_module(source).programs[0]
    assert synthesize_allreduce_signals(program) is program
    assert "__allreduce" not in print_module(synthesize(source))


def test_implicit_return_is_lifted():
    before = host_program(PROLOGUE + "        return pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)\n")
    after = host_program(sig(0) + PROLOGUE_OUT + """\
        __allreduce_result_1 = pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        return __allreduce_result_1
""")
    assert_same_source(synthesized_source(before), after)


def test_explicit_return_is_lifted_without_a_signal():
    before = host_program("""\
        data_buf = pld.alloc_window_buffer(1024)
        signal_buf = pld.alloc_window_buffer(16)
        data = pld.window(data_buf, [256], dtype=pl.FP32)
        signal = pld.window(signal_buf, [pld.world_size(), 1], dtype=pl.INT32)
        return pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum), data
""")
    after = host_program("""\
        data_buf = pld.tensor.alloc_window_buffer(1024)
        signal_buf = pld.tensor.alloc_window_buffer(16)
        data = pld.tensor.window(data_buf, [256], dtype=pl.FP32)
        signal = pld.tensor.window(signal_buf, [pld.system.world_size(), 1], dtype=pl.INT32)
        __allreduce_result_0 = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        return __allreduce_result_0, data
""")
    assert_same_source(synthesized_source(before), after)


def test_chained_allreduce_result_keeps_its_lineage():
    # data_2 comes from an explicit allreduce of data_1 (an alias of data): same buffer,
    # so both implicit calls share one signal.
    before = host_program("""\
        data_buf = pld.alloc_window_buffer(1024)
        signal_buf = pld.alloc_window_buffer(16)
        data = pld.window(data_buf, [256], dtype=pl.FP32)
        signal = pld.window(signal_buf, [pld.world_size(), 1], dtype=pl.INT32)
        data_1 = data
        data_2 = pld.tensor.allreduce(data_1, signal, op=pld.ReduceOp.Sum)
        data_3 = pld.tensor.allreduce(data_2, op=pld.ReduceOp.Sum)
        data_4 = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
        return data_4
""")
    after = host_program(sig(0) + """\
        data_buf = pld.tensor.alloc_window_buffer(1024)
        signal_buf = pld.tensor.alloc_window_buffer(16)
        data = pld.tensor.window(data_buf, [256], dtype=pl.FP32)
        signal = pld.tensor.window(signal_buf, [pld.system.world_size(), 1], dtype=pl.INT32)
        data_1 = data
        data_2 = pld.tensor.allreduce(data_1, signal, op=pld.ReduceOp.Sum)
        data_3 = pld.tensor.allreduce(data_2, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        data_4 = pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        return data_4
""")
    assert_same_source(synthesized_source(before), after)


def test_loop_carried_value_traces_to_its_initial_value():
    before = host_program("""\
        buf = pld.alloc_window_buffer(1024)
        x = pld.window(buf, [256], dtype=pl.FP32)
        for i, (acc,) in pl.range(0, 4, 1, init_values=(x,)):
            acc_1 = pld.tensor.allreduce(acc, op=pld.ReduceOp.Sum)
            acc_2 = pl.yield_(acc_1)
        y = pld.tensor.allreduce(acc_2, op=pld.ReduceOp.Sum)
        z = pld.tensor.allreduce(x, op=pld.ReduceOp.Sum)
        return y
""")
    result = synthesize(before).programs[0].function("host_orch")
    calls = [s.value for s in ir.walk_stmts(result.body)
             if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "pld.tensor.allreduce"]
    assert [c.args[1] for c in calls] == [ir.Var("__allreduce_signal_0")] * 3
    assert sum(1 for s in result.body if isinstance(s, ir.Assign)
               and s.target == ir.Var("__allreduce_signal_0")) == 1


def test_allgather_result_follows_its_target_window():
    before = host_program("""\
        local_buf = pld.alloc_window_buffer(1024)
        target_buf = pld.alloc_window_buffer(2048)
        signal_buf = pld.alloc_window_buffer(16)
        local = pld.window(local_buf, [256], dtype=pl.FP32)
        target = pld.window(target_buf, [2, 256], dtype=pl.FP32)
        signal = pld.window(signal_buf, [pld.world_size(), 1], dtype=pl.INT32)
        gathered = pld.tensor.allgather(local, target, signal)
        gathered = pld.tensor.allreduce(gathered, op=pld.ReduceOp.Sum)
        target = pld.tensor.allreduce(target, op=pld.ReduceOp.Sum)
        local = pld.tensor.allreduce(local, op=pld.ReduceOp.Sum)
        return target
""")
    func = synthesize(before).programs[0].function("host_orch")
    signals = [s.value.args[1].name for s in ir.walk_stmts(func.body)
               if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall)
               and s.value.op == "pld.tensor.allreduce"]
    assert signals == ["__allreduce_signal_0", "__allreduce_signal_0", "__allreduce_signal_1"]


def test_function_parameter_as_data_and_non_variable_data():
    before = host_program("""\
        seed = pld.tensor.allreduce(seed, op=pld.ReduceOp.Sum)
        seed = pld.tensor.allreduce(seed, op=pld.ReduceOp.Sum)
        pld.tensor.allreduce(pld.window(other_buf, [4], dtype=pl.FP32), op=pld.ReduceOp.Sum)
        pld.tensor.allreduce(pld.window(other_buf, [4], dtype=pl.FP32), op=pld.ReduceOp.Sum)
        return seed
""", params="self, seed: pld.DistributedTensor[[256], pl.FP32], other_buf: pl.Ptr")
    after = host_program(sig(0) + sig(1) + sig(2) + """\
        seed = pld.tensor.allreduce(seed, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        seed = pld.tensor.allreduce(seed, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        pld.tensor.allreduce(pld.tensor.window(other_buf, [4], dtype=pl.FP32), __allreduce_signal_1, op=pld.ReduceOp.Sum)
        pld.tensor.allreduce(pld.tensor.window(other_buf, [4], dtype=pl.FP32), __allreduce_signal_2, op=pld.ReduceOp.Sum)
        return seed
""", params="self, seed: pld.DistributedTensor[[256], pl.FP32], other_buf: pl.Ptr")
    assert_same_source(synthesized_source(before), after)


def test_reserved_names_across_two_host_functions():
    # host_a holds user variables named like suffix 0 and a result name 1; host_b sorts
    # after host_a, so it draws from the same counter afterwards.
    before = HEADER + "@pl.program\nclass P:\n" + CHIP + """\
    @pl.function(level=pl.Level.HOST, type=pl.FunctionType.Orchestration)
    def host_b(self, data: pld.DistributedTensor[[256], pl.FP32]):
        return pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_a(self):
        data_buf = pld.alloc_window_buffer(1024)
        __allreduce_signal_buf_0 = pld.alloc_window_buffer(pld.world_size() * 4)
        __allreduce_result_2 = pld.window(data_buf, [256], dtype=pl.FP32)
        __allreduce_result_0 = __allreduce_result_2
        data = pld.window(data_buf, [256], dtype=pl.FP32)
        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
        return pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
"""
    after = HEADER + "@pl.program\nclass P:\n" + CHIP + """\
    @pl.function(level=pl.Level.HOST, type=pl.FunctionType.Orchestration)
    def host_b(self, data: pld.DistributedTensor[[256], pl.FP32]):
""" + sig(4) + """\
        __allreduce_result_5 = pld.tensor.allreduce(data, __allreduce_signal_4, op=pld.ReduceOp.Sum)
        return __allreduce_result_5

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_a(self):
""" + sig(1) + """\
        data_buf = pld.tensor.alloc_window_buffer(1024)
        __allreduce_signal_buf_0 = pld.tensor.alloc_window_buffer(pld.system.world_size() * 4)
        __allreduce_result_2 = pld.tensor.window(data_buf, [256], dtype=pl.FP32)
        __allreduce_result_0 = __allreduce_result_2
        data = pld.tensor.window(data_buf, [256], dtype=pl.FP32)
        data = pld.tensor.allreduce(data, __allreduce_signal_1, op=pld.ReduceOp.Sum)
        __allreduce_result_3 = pld.tensor.allreduce(data, __allreduce_signal_1, op=pld.ReduceOp.Sum)
        return __allreduce_result_3
"""
    assert_same_source(synthesized_source(before), after)


def test_alloc_name_kwarg_is_reserved_even_when_the_variable_differs():
    # IR built directly (as pypto's test does): an alloc named __allreduce_signal_buf_0
    # bound to a variable of another name still blocks suffix 0.
    alloc = ir.OpCall("pld.tensor.alloc_window_buffer", (ir.Const(16),),
                      (("name", ir.Const("__allreduce_signal_buf_0")),))
    call = ir.OpCall("pld.tensor.allreduce", (ir.Var("data"),), (("op", ir.Symbol("pld.ReduceOp.Sum")),))
    host = ir.Function("host_orch", (ir.Param("data"),), None,
                       (ir.Assign(ir.Var("user_named_buf"), alloc), ir.Assign(ir.Var("out"), call)),
                       (("level", ir.Symbol("pl.Level.HOST")), ("role", ir.Symbol("pl.Role.Orchestrator"))))
    result = synthesize_allreduce_signals(ir.Program("P", (host,)))
    names = [s.value.kwarg("name") for s in result.functions[0].body
             if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall)
             and s.value.op == "pld.tensor.alloc_window_buffer"]
    assert names == [ir.Const("__allreduce_signal_buf_1"), ir.Const("__allreduce_signal_buf_0")]


def test_chip_level_and_incore_functions_are_untouched():
    source = HEADER + """\
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, data: pld.DistributedTensor[[256], pl.FP32], signal: pld.DistributedTensor[[4], pl.INT32]):
        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, data: pld.DistributedTensor[[256], pl.FP32]):
        pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
        return pl.store(pl.load(data, [0], [256]), [0], data)

    @pl.function(level=pl.Level.HOST)
    def host_worker(self, data: pld.DistributedTensor[[256], pl.FP32]):
        return pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
"""
    program = parse_module(source).programs[0]
    assert synthesize_allreduce_signals(program) is program


def test_nested_allreduce_is_rejected():
    for nested in ("wrapped = (pld.tensor.allreduce(data, op=pld.ReduceOp.Sum),)",
                   "x = pl.add(pld.tensor.allreduce(data, op=pld.ReduceOp.Sum), 1)",
                   "pld.tensor.allreduce(pld.tensor.allreduce(data), op=pld.ReduceOp.Sum)",
                   "for r in pl.range(pld.tensor.allreduce(data)):\n            pass"):
        source = host_program(PROLOGUE + f"        {nested}\n        return data\n")
        with pytest.raises(AllReduceSignalError, match="must be a direct assignment, expression statement, "
                                                       "or return value") as info:
            synthesize(source)
        assert isinstance(info.value, ValueError)
        assert info.value.line == 15  # header 3, class 2, chip 3, deco + def 2, prologue 4


def test_wrong_positional_argument_count_is_rejected():
    # `op` is keyword-only in pypto's user-facing function: a third positional argument
    # is an error, not the reduce op
    for n, call in ((0, "pld.tensor.allreduce()"), (3, "pld.tensor.allreduce(data, data, pld.ReduceOp.Max)"),
                    (4, "pld.tensor.allreduce(data, data, pld.ReduceOp.Sum, data)")):
        source = host_program(PROLOGUE + f"        data = {call}\n        return data\n")
        with pytest.raises(ValueError, match=rf"expects target\[, signal\], got {n} positional arguments"):
            synthesize(source)


def test_core_num_must_be_a_positive_constant():
    source = host_program(PROLOGUE + "        data = pld.tensor.allreduce(data, core_num=0)\n        return data\n")
    with pytest.raises(ValueError, match="core_num must be a positive integer"):
        synthesize(source)


def test_round_trip_and_idempotence_on_examples(examples_dir):
    for path in sorted(examples_dir.glob("*.py")):
        module = synthesize(path.read_text(), verify=True)
        again = parse_module(print_module(module))
        assert again == module, path.name
        assert SynthesizeAllReduceSignals().run_module(module) is module, path.name
        assert print_module(again) == print_module(module)


def test_example_two_buffers_loop_golden(examples_dir):
    func = synthesize((examples_dir / "allreduce_two_buffers_loop.py").read_text()).programs[0].function("host_orch")
    hoisted = [s.target.name for s in func.body[:6]]
    assert hoisted == ["__allreduce_signal_world_size_0", "__allreduce_signal_buf_0", "__allreduce_signal_0",
                       "__allreduce_signal_world_size_1", "__allreduce_signal_buf_1", "__allreduce_signal_1"]
    assert func.body[4].value.args[0] == ir.BinOp("*", ir.BinOp("*", ir.Var("__allreduce_signal_world_size_1"),
                                                               ir.Const(4)), ir.OpCall("pl.INT32.get_byte"))
    assert func.body[-1] == ir.Return((ir.Var("__allreduce_result_2"),))
