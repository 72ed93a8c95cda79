"""SynthesizeAllReduceSignals' checks of allreduce arguments (pypto's user-facing
`pld.tensor.allreduce(target, signal=<missing>, *, op, mode="mesh", core_num=1)`, spec 002
Checks): the exact one-line error at the call's line:col, through the pass and the CLI."""

from __future__ import annotations

import pytest

from tilecc.cli import main
from tilecc.errors import PassError, TileccError
from tilecc.host.parser import parse_module
from tilecc.host.pass_manager import PassPipeline
from tilecc.host.passes import get_pass
from tilecc.host.passes.synthesize_allreduce_signals import AllReduceSignalError
from tilecc.host.printer import print_module

from .conftest import CHIP, HEADER, host_program

SIGNAL = """\
        buf = pld.alloc_window_buffer(1024)
        sig_buf = pld.alloc_window_buffer(64)
        d = pld.window(buf, [256], dtype=pl.FP32)
        s = pld.window(sig_buf, [pld.world_size(), 1], dtype=pl.INT32)
"""
# the body of host_program starts on line 11; SIGNAL takes 4 lines, so the call is on 15
CASES = [
    ("x = pld.tensor.allreduce(d, s, pld.ReduceOp.Max)",
     "15:13: error: pld.tensor.allreduce expects target[, signal], got 3 positional arguments "
     "(op=, mode= and core_num= are keyword-only)"),
    ("x = pld.tensor.allreduce(d, s, pld.ReduceOp.Max, 2)",
     "15:13: error: pld.tensor.allreduce expects target[, signal], got 4 positional arguments "
     "(op=, mode= and core_num= are keyword-only)"),
    ("pld.tensor.allreduce()",
     "15:9: error: pld.tensor.allreduce expects target[, signal], got 0 positional arguments "
     "(op=, mode= and core_num= are keyword-only)"),
    ("x = pld.tensor.allreduce(d, pld.ReduceOp.Sum)",
     "15:13: error: pld.tensor.allreduce signal must be an INT32 window tensor, got the constant "
     "`pld.ReduceOp.Sum` (pass the reduce op as op=)"),
    ("x = pld.tensor.allreduce(d, 0)",
     "15:13: error: pld.tensor.allreduce signal must be an INT32 window tensor, got the constant "
     "`0` (pass the reduce op as op=)"),
    ("x = pld.tensor.allreduce(d, mode=\"ring\")",
     "15:13: error: pld.tensor.allreduce mode=\"ring\" requires an explicit signal; host signal "
     "synthesis only supports mesh mode"),
    ("x = pld.tensor.allreduce(d, s, mode=\"ring\", core_num=2)",
     "15:13: error: pld.tensor.allreduce mode=\"ring\" requires core_num == 1, got 2"),
    ("x = pld.tensor.allreduce(d, op=pld.ReduceOp.Avg)",
     "15:13: error: pld.tensor.allreduce op must be pld.ReduceOp.Sum, .Max, .Min or .Prod, got `pld.ReduceOp.Avg`"),
    ("x = pld.tensor.allreduce(d, s, op=\"sum\")",
     "15:13: error: pld.tensor.allreduce op must be pld.ReduceOp.Sum, .Max, .Min or .Prod, got `'sum'`"),
    ("x = pld.tensor.allreduce(d, op=pl.FP32)",
     "15:13: error: pld.tensor.allreduce op must be pld.ReduceOp.Sum, .Max, .Min or .Prod, got `pl.FP32`"),
    ("x = pld.tensor.allreduce(d, mode=\"tree\")",
     "15:13: error: pld.tensor.allreduce mode must be \"mesh\" or \"ring\", got 'tree'"),
    ("x = pld.tensor.allreduce(d, s, core_num=0)",
     "15:13: error: pld.tensor.allreduce core_num must be a positive integer constant, got 0"),
    ("x = pld.tensor.allreduce(d, core_num=2 - 3)",
     "15:13: error: pld.tensor.allreduce core_num must be a positive integer constant, got -1"),
    ("x = pld.tensor.allreduce(d, core_num=True)",
     "15:13: error: pld.tensor.allreduce core_num must be a positive integer constant for signal synthesis"),
    ("x = pld.tensor.allreduce(d, core_num=2.0)",
     "15:13: error: pld.tensor.allreduce core_num must be a positive integer constant for signal synthesis"),
    ("x = pld.tensor.allreduce(d, core_num=pld.world_size())",
     "15:13: error: pld.tensor.allreduce core_num must be a positive integer constant for signal synthesis"),
]


def run(source: str, path: str = "prog.py"):
    return PassPipeline([get_pass("synthesize-allreduce-signals")], path=path).run(parse_module(source, path))


@pytest.mark.parametrize("statement, expected", CASES)
def test_bad_arguments_are_one_line_errors_at_the_call(statement, expected):
    source = host_program(SIGNAL + f"        {statement}\n        return d\n")
    with pytest.raises(AllReduceSignalError) as info:
        run(source)
    err = info.value
    assert str(err) == "prog.py:" + expected
    assert isinstance(err, ValueError) and isinstance(err, PassError) and isinstance(err, TileccError)
    assert (err.line, err.col) == tuple(int(n) for n in expected.split(":")[:2])


@pytest.mark.parametrize("statement, expected", CASES[:1] + CASES[5:6])
def test_cli_prints_the_error_as_one_line(tmp_path, capsys, monkeypatch, statement, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.py").write_text(host_program(SIGNAL + f"        {statement}\n        return d\n"))
    assert main(["host-opt", "prog.py", "-o", "out.py"]) == 1
    assert capsys.readouterr().err == f"prog.py:{expected}\n"
    assert not (tmp_path / "out.py").exists()


def test_explicit_calls_in_chip_functions_are_checked_too():
    # pypto checks the arguments where the call is written, whatever the function's level
    source = HEADER + "@pl.program\nclass P:\n" + CHIP + """\
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_b(self, d: pld.DistributedTensor[[256], pl.FP32], s: pld.DistributedTensor[[4], pl.INT32]):
        d = pld.tensor.allreduce(d, s, mode="ring", core_num=4)
        return d
"""
    with pytest.raises(AllReduceSignalError, match="requires core_num == 1, got 4") as info:
        run(source)
    assert (info.value.line, info.value.col) == (11, 13)


def test_a_local_variable_shadows_a_module_constant():
    # `CORES` assigned in the function is a DSL variable, not the module's constant
    source = HEADER + "CORES = 4\n\n" + "@pl.program\nclass P:\n" + CHIP + """\
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, d: pld.DistributedTensor[[256], pl.FP32]):
        CORES = pld.world_size()
        d = pld.tensor.allreduce(d, core_num=CORES)
        return d
"""
    with pytest.raises(AllReduceSignalError) as info:
        run(source)
    assert str(info.value) == ("prog.py:14:13: error: pld.tensor.allreduce core_num must be a positive integer "
                               "constant for signal synthesis (`CORES` is a variable of the function, not a "
                               "Python int)")


@pytest.mark.parametrize("module_code", [
    "CORES = 4\nCORES = 8\n",            # bound twice: not a constant tilecc folds
    "CORES = 4\nCORES += 1\n",
    "from somewhere import CORES\n",
    "CORES = 2 ** 100000\n",             # too big to fold
])
def test_names_pypto_reads_at_decoration_are_kept_as_written(module_code):
    # pypto reads CORES as a Python int when it decorates the class; tilecc cannot fold it,
    # so the signal is sized with the name itself
    source = HEADER + module_code + "\n@pl.program\nclass P:\n" + CHIP + """\
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, d: pld.DistributedTensor[[256], pl.FP32]):
        d = pld.tensor.allreduce(d, core_num=CORES)
        pld.tensor.allreduce(d)
        return d
"""
    printed = print_module(run(source))
    assert ("__allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer("
            "__allreduce_signal_world_size_0 * CORES * pl.INT32.get_byte())") in printed
    assert "pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, CORES]" in printed
    assert printed.count("__allreduce_signal_0") == 3


def test_builder_parameter_is_kept_as_written_and_shadows_a_module_constant():
    # inside a builder `n` is the builder's parameter (a Python int when pypto builds the
    # program), whatever the module binds; `n + 1` on another call of the buffer is not
    # comparable with it before the program is built
    source = HEADER + """\
n = 4


def build(n):
    @pl.program
    class P:
        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(self, d: pld.DistributedTensor[[256], pl.FP32]):
            d = pld.tensor.allreduce(d, core_num=n)
            return d
    return P
"""
    printed = print_module(run(source))
    assert "pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, n], dtype=pl.INT32)" \
        in printed
    with pytest.raises(AllReduceSignalError) as info:
        run(source.replace("            return d\n", "            d = pld.tensor.allreduce(d, core_num=n + 1)\n"
                                                     "            return d\n"))
    assert str(info.value) == ("prog.py:13:17: error: pld.tensor.allreduce core_num=n + 1 and core_num=n of one "
                               "buffer's implicit allreduces cannot be compared before the program is built; give "
                               "them the same core_num or pass an explicit signal")


def test_a_constant_bound_after_the_program_is_not_visible_in_it():
    # pypto folds core_num when the class is decorated: a later binding does not exist yet
    source = HEADER + "@pl.program\nclass P:\n" + CHIP + """\
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, d: pld.DistributedTensor[[256], pl.FP32]):
        d = pld.tensor.allreduce(d, core_num=CORES)
        return d


CORES = 4
"""
    with pytest.raises(AllReduceSignalError, match="for signal synthesis \\(`CORES` is not bound where the "
                                                   "program is defined\\)"):
        run(source)
    assert "core_num=CORES" in print_module(run(source.replace("\n\nCORES = 4\n", "\n").replace(
        "@pl.program", "CORES = 4\n\n\n@pl.program")))


def test_core_num_from_a_tuple_unpacking_module_constant():
    source = HEADER + "LANES, SPARE = 3, 1\n\n@pl.program\nclass P:\n" + CHIP + """\
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, d: pld.DistributedTensor[[256], pl.FP32]):
        d = pld.tensor.allreduce(d, core_num=LANES)
        return d
"""
    assert "[__allreduce_signal_world_size_0, 3], dtype=pl.INT32)" in print_module(run(source))
