"""Parser and printer of the host DSL: pypto syntax in, equal IR after print -> parse."""

from __future__ import annotations

import re

import pytest

from tilecc.errors import ParseError
from tilecc.host import ir
from tilecc.host.parser import parse_module, parse_program
from tilecc.host.printer import print_module

from .conftest import HEADER, assert_same_source, host_program

# A program in the style of pypto's tests/st/distributed (InCore + chip + host levels).
REALISTIC = HEADER + '''\
SIZE = 64
NR = 2


def helper_outside_the_program(x):
    return [v * 2 for v in x]


@pl.program
class Realistic:
    """Docstring of the program."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def kernel(
        self,
        inp: pl.Tensor[[1, SIZE], pl.FP32],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        my_rank: pl.Scalar[pl.INT32],
    ) -> pld.DistributedTensor[[1, SIZE], pl.FP32]:
        """Stage the input when this rank is the root."""
        if my_rank == 0:  # root only
            local = pl.load(inp, [0, 0], [1, SIZE])
            return pl.store(local, [0, 0], data)
        elif my_rank < 0 or not my_rank:
            pass
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def accumulate(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        init_tile: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [64, 64], target_memory=pl.Mem.Vec)
        for _i, (acc, cnt) in pl.range(0, 4, init_values=(init_tile, 0)):
            acc_next = pl.add(acc, x[0:64, :])
            acc_out, cnt_out = pl.yield_(acc_next, cnt + 1)
        with pl.incore():
            y = -acc_out[::2, 1] ** 2 // 3 % 5
        return pl.store(acc_out, [0, 0], out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ) -> pl.Tensor[[NR, 1, SIZE], pl.FP32]:
        data_buf = pld.alloc_window_buffer(SIZE * pl.FP32.get_byte())
        signal_buf: pl.Ptr = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
        signal = pld.window(signal_buf, [pld.world_size()], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            self.kernel(inputs[r], data, r, device=r)
            peer = (r + 1) % pld.world_size()
            if peer == 0:
                continue
        data = pld.all_reduce(data, op=pld.ReduceOp.Sum)
        data = pld.all_reduce(data, op=pld.ReduceOp.Sum, mode="ring", nranks=NR)
        n, m = 1, 2.5
        flag = True if n >= 1 else False
        while flag:
            flag = False
            break
        return outputs


class TestRealisticPrograms:
    def helper(self):
        return 1
'''


def test_realistic_program_round_trips():
    module = parse_module(REALISTIC, "real.py")
    printed = print_module(module)
    again = parse_module(printed, "printed.py")
    assert again == module
    assert print_module(again) == printed
    assert [type(i).__name__ for i in module.items] == ["Verbatim"] * 5 + ["Program", "Verbatim"]
    program = module.program("Realistic")
    assert [f.name for f in program.functions] == ["kernel", "accumulate", "host_orch"]
    assert [f.is_host_orchestrator for f in program.functions] == [False, False, True]
    assert program.function("kernel").func_type == "Orchestration"
    assert program.function("kernel").doc == "Stage the input when this rank is the root."
    assert program.doc == "Docstring of the program."
    assert '"""Docstring of the program."""' in printed


def test_short_forms_resolve_and_alloc_names_come_from_the_lhs():
    func = parse_module(REALISTIC).program("Realistic").function("host_orch")
    data_alloc, signal_alloc, signal_window = func.body[0], func.body[1], func.body[2]
    assert data_alloc.value == ir.OpCall(
        "pld.tensor.alloc_window_buffer",
        (ir.BinOp("*", ir.Var("SIZE"), ir.OpCall("pl.FP32.get_byte")),),
        (("name", ir.Const("data_buf")),))
    assert signal_alloc.annotation == ir.Symbol("pl.Ptr")
    assert signal_alloc.value.kwarg("name") == ir.Const("signal_buf")
    assert signal_window.value.op == "pld.tensor.window"
    assert signal_window.value.args[1] == ir.ListExpr((ir.OpCall("pld.system.world_size"),))
    printed = print_module(parse_module(REALISTIC))
    assert "name=" not in printed and "pld.window(" not in printed and "pld.world_size(" not in printed


def test_ergonomic_all_reduce_mesh_resolves_to_tensor_allreduce():
    func = parse_module(REALISTIC).program("Realistic").function("host_orch")
    mesh, ring = func.body[4].value, func.body[5].value
    assert mesh == ir.OpCall("pld.tensor.allreduce", (ir.Var("data"),), (("op", ir.Symbol("pld.ReduceOp.Sum")),))
    assert ring.op == "pld.all_reduce"  # ring mode allocates its own signal: kept as written


def test_loop_carried_values_and_tuple_targets():
    func = parse_module(REALISTIC).program("Realistic").function("accumulate")
    loop = func.body[1]
    assert isinstance(loop, ir.For)
    assert loop.index == ir.Var("_i") and loop.iter_args == (ir.Var("acc"), ir.Var("cnt"))
    assert loop.body[1].target == ir.TupleExpr((ir.Var("acc_out"), ir.Var("cnt_out")))
    assert isinstance(func.body[2], ir.With)


def test_signal_keyword_becomes_positional():
    source = host_program("        pld.tensor.allreduce(d, signal=s, op=pld.ReduceOp.Sum)\n")
    call = parse_program(source).function("host_orch").body[0].expr
    assert call.args == (ir.Var("d"), ir.Var("s")) and call.kwargs == (("op", ir.Symbol("pld.ReduceOp.Sum")),)


def test_structural_equality_distinguishes_roles_and_literal_types():
    assert ir.Const(True) != ir.Const(1) and ir.Const(1) != ir.Const(1.0)
    assert ir.OpCall("pl.add", (ir.Var("a"),)) != ir.FuncCall("pl.add", (ir.Var("a"),))
    assert ir.Var("a") == ir.Var("a")
    # positions never take part in equality
    assert ir.OpCall("pl.add", (), (), 3, 4) == ir.OpCall("pl.add", (), (), 7, 1)
    a = parse_program(host_program("        x = 1\n        return x\n"))
    b = parse_program(host_program("        x = 1\n        return (x)\n"))
    c = parse_program(host_program("        x = 1\n        return x,\n"))
    assert a == b and a == c  # `return x,` is one value, as pypto's ReturnStmt
    d = parse_program(host_program("        y = 1\n        return y\n"))
    assert a != d


def test_printing_is_stable_and_spacing_insensitive():
    tight = host_program("        x=pld.window(b,[4],dtype=pl.FP32)\n        return x\n")
    loose = host_program("        x = pld.window(\n            b, [4], dtype=pl.FP32,\n        )\n        return x\n")
    assert print_module(parse_module(tight)) == print_module(parse_module(loose))
    assert_same_source(print_module(parse_module(tight)),
                       host_program("        x = pld.tensor.window(b, [4], dtype=pl.FP32)\n        return x\n"))


@pytest.mark.parametrize("statement, message, col", [
    ("x = [i for i in y]", "unsupported expression `ListComp`", 13),
    ("x = lambda: 1", "unsupported expression `Lambda`", 13),
    ("x = f(*args)", "`*args` unpacking is not supported", 15),
    ("x = f(**kw)", "`**kwargs` is not supported", 15),
    ("del x", "unsupported statement `Delete`", 9),
    ("try:\n            pass\n        except E:\n            pass", "unsupported statement `Try`", 9),
    ("for r in range(4):\n            pass", "for loops must iterate over pl.range(), pl.parallel()", 18),
    ("a = b = 1", "chained assignment", 9),
    ("x[0][1] = 1", "chained subscripts cannot be assigned", 9),
    ("x.y = 1", "expected a variable, a tuple of variables or `name[index]`", 9),
    ("x: pl.Ptr", "an annotated name needs a value", 9),
    ("pld.alloc_window_buffer(16)", "must be assigned to one variable", 9),
    ("a, b = pld.alloc_window_buffer(16)", "must be assigned to one variable", 16),
    ("b = pld.alloc_window_buffer(16, name='b')", "do not pass name=", 13),
    ("pld.tensor.allreduce(d, None)", "signal=None is not allowed", 9),
    ("pld.tensor.allreduce(d, signal=None, op=pld.ReduceOp.Sum)", "signal=None is not allowed", 9),
])
def test_unsupported_syntax_is_a_parse_error_with_position(statement, message, col):
    source = host_program(f"        {statement}\n        return 0\n")
    with pytest.raises(ParseError, match=re.escape(message)) as info:
        parse_module(source, "prog.py")
    err = info.value
    assert (err.path, err.line, err.col) == ("prog.py", 11, col)
    assert str(err).startswith(f"prog.py:11:{col}: error: ")
    assert err.source_line is not None and err.source_line.strip().startswith(statement.split("\n")[0][:8])


def test_module_level_errors():
    with pytest.raises(ParseError, match="invalid Python syntax") as info:
        parse_module("import pypto.language as pl\n\ndef f(:\n", "bad.py")
    assert info.value.line == 3
    with pytest.raises(ParseError, match="expected `import pypto.language as pl`"):
        parse_module("import pypto.language as lang\n")
    with pytest.raises(ParseError, match="expected a @pl.function method"):
        parse_module(HEADER + "@pl.program\nclass P:\n    x = 1\n")
    with pytest.raises(ParseError, match="defined twice"):
        parse_module(HEADER + "@pl.program\nclass P:\n" + "    @pl.function\n    def f(self):\n        pass\n" * 2)
    with pytest.raises(ParseError, match="cannot take `self`"):
        parse_module(HEADER + "@pl.function\ndef f(self, x):\n    pass\n")
    with pytest.raises(ParseError, match=r"`\*args`, `\*\*kwargs`") as info:
        parse_module(HEADER + "@pl.program\nclass P:\n    @pl.function\n    def f(self, *xs):\n        pass\n")
    assert (info.value.line, info.value.col) == (7, 18)
    with pytest.raises(ParseError, match="exactly one @pl.program"):
        parse_program(HEADER)


def test_bare_decorators_and_default_function_type():
    program = parse_program(HEADER + "@pl.program\nclass P:\n    @pl.function\n    def f(self):\n        pass\n")
    assert program.decorator is None and program.functions[0].decorator is None
    assert program.functions[0].func_type == "Opaque" and not program.functions[0].is_host_orchestrator
    assert parse_program(print_module(ir.Module((program,)))) == program
