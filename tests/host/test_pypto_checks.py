"""pypto's parse-time refusals (tilecc/host/pypto_checks.py), one case per rule, with the
accepted forms beside them; and the loop / argument forms pypto programs use
(pl.pipeline, pl.split_aiv, list comprehensions in arguments), which round-trip."""

from __future__ import annotations

import pytest

from tilecc.errors import ParseError
from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.printer import print_module

from .conftest import HEADER

HOST = "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"


def program(*functions: str) -> str:
    return HEADER + "@pl.program\nclass P:\n" + "".join(functions)


def host(body: str, deco: str = HOST, name: str = "host") -> str:
    return deco + f"    def {name}(self):\n" + "".join(f"        {line}\n" for line in body.splitlines())


@pytest.mark.parametrize("source, where, message", [
    (program(host("n = pld.world_size()", "    @pl.function(type=pl.FunctionType.InCore)\n")), "8:13",
     r"pld.system.world_size\(\) can only be called in HOST orchestration context .* current function level: unset"),
    (program(host("buf = pld.alloc_window_buffer(64)", "    @pl.function(level=pl.Level.CHIP)\n")), "8:15",
     r"pld.tensor.alloc_window_buffer\(\) can only be called in HOST .* level: CHIP"),
    (program(host("with pl.incore():\n    n = pld.world_size()")), "9:17", "not inside InCore / SPMD scopes"),
    (program(host("with pl.at(level=pl.Level.CORE_GROUP):\n    buf = pld.alloc_window_buffer(8)")), "9:19",
     "can only be called in HOST orchestration"),
    (program(host("for i in pl.spmd(4):\n    n = pld.world_size()")), "9:17", "can only be called in HOST"),
    (program(host("buf = pld.alloc_window_buffer(64)\nbuf = pld.alloc_window_buffer(64)")), "9:15",
     "name 'buf' is already declared in this program"),
    (program(host("buf = pld.alloc_window_buffer(64)"), host("buf = pld.alloc_window_buffer(8)", name="other")),
     "11:15", "name 'buf' is already declared"),
    (program(host("buf = pld.alloc_window_buffer([4, 8])")), "8:15", "requires dtype= when the first argument is a shape"),
    (program(host("buf = pld.alloc_window_buffer([], dtype=pl.FP32)")), "8:15", "shape must be non-empty"),
    (program(host("buf = pld.alloc_window_buffer([4, 0], dtype=pl.FP32)")), "8:15",
     r"shape dimension\[1\] is 0; all dimensions must be positive"),
    (program(host("buf = pld.alloc_window_buffer(64, dtype=pl.FP32)")), "8:15",
     "dtype= is only valid when the first argument is a shape"),
    (program(host("n = pld.world_size(2)")), "8:13", "pld.system.world_size takes at most 0 positional arguments"),
    (program(host("buf = pld.alloc_window_buffer(64)\nw = pld.window(buf, [16])")), "9:13",
     "pld.tensor.window is missing argument `dtype`"),
    (program(host("buf = pld.alloc_window_buffer(64)\nw = pld.window(buf, 16, dtype=pl.FP32)")), "9:13",
     "pld.tensor.window shape must be a list"),
    (program("    @pl.function(type=pl.FunctionType.InCore)\n    def k(self):\n        return 1\n",
             host("for r in pl.range(pld.world_size()):\n    self.k(device=r)")), "12:13",
     "Function 'k' does not accept keyword argument 'device'"),
])
def test_pypto_refusals(source, where, message):
    with pytest.raises(ParseError, match=message) as info:
        parse_module(source, "p.py")
    assert f"p.py:{where}:" in str(info.value)


@pytest.mark.parametrize("body", [
    "buf = pld.alloc_window_buffer([4, 8], dtype=pl.FP32)\nn = pld.world_size()",
    "with pl.incore():\n    x = 1\nbuf = pld.alloc_window_buffer(4)",
    "with pl.at(level=pl.Level.HOST):\n    buf = pld.alloc_window_buffer(4)",
])
def test_accepted_host_forms(body):
    parse_module(program(host(body)), "p.py")


def test_device_on_orchestrators_is_accepted():
    chip = "    @pl.function(type=pl.FunctionType.Orchestration)\n    def c(self):\n        return 1\n"
    parse_module(program(chip, host("for r in pl.range(pld.world_size()):\n    self.c(device=r)")), "p.py")


def round_trip(source: str) -> ir.Module:
    module = parse_module(source, "<t>")
    printed = print_module(module)
    assert parse_module(printed, "<t>") == module
    return module


def test_pipeline_split_aiv_and_list_comprehension_arguments_round_trip():
    module = round_trip(program(host(
        "for i in pl.pipeline(0, 4, 1, stage=2):\n"
        "    for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):\n"
        "        x = pl.tile.full([d for d in [4, 8] if d > 1], dtype=pl.FP32, value=aiv_id)\n"
        "for k, (acc,) in pl.pipeline(0, 8, 2, stage=2, init_values=(x,)):\n"
        "    acc = pl.yield_(acc)")))
    loop = module.programs[0].functions[0].body[0]
    assert isinstance(loop, ir.For) and loop.iterable.op == "pl.pipeline"
    inner = loop.body[0]
    assert isinstance(inner, ir.For) and inner.iterable.op == "pl.split_aiv"
    comp = inner.body[0].value.args[0]
    assert comp == ir.ListComp(ir.Var("d"), ir.Var("d"), ir.ListExpr((ir.Const(4), ir.Const(8))),
                               (ir.Compare(ir.Var("d"), (">",), (ir.Const(1),)),))


@pytest.mark.parametrize("argument, message", [
    ("[a for a in x for b in y]", "a single `for` clause"),
    ("[a for a, b in x]", "target must be a single name"),
])
def test_list_comprehension_refusals(argument, message):
    with pytest.raises(ParseError, match=message):
        parse_module(program(host(f"x = pl.tile.full({argument}, dtype=pl.FP32, value=0)")), "p.py")


def test_list_comprehension_outside_arguments_stays_unsupported():
    with pytest.raises(ParseError, match="unsupported expression `ListComp`"):
        parse_module(program(host("x = [a for a in y]")), "p.py")
