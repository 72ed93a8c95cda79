"""Host IR that the parser never builds (hand-made IR) is refused with a clear error by
the runtime and the printer instead of failing on a missing attribute."""

from __future__ import annotations

import pytest

from tilecc.errors import InterpError
from tilecc.host import ir
from tilecc.host.printer import print_module
from tilecc.host.runtime.interpreter import run_host


def _module(*body: ir.Stmt) -> ir.Module:
    func = ir.Function("host", (), None, body + (ir.Return(()),))
    return ir.Module((ir.Program("P", (func,)),))


def test_tuple_assignment_to_a_non_variable_is_an_interp_error():
    module = _module(ir.Assign(ir.TupleExpr((ir.Var("a"), ir.Const(1))),
                               ir.TupleExpr((ir.Const(1), ir.Const(2)))))
    with pytest.raises(InterpError, match="cannot assign to Const"):
        run_host(module, "P", "host", 1)


def test_range_loop_without_index_is_an_interp_error():
    loop = ir.For(None, None, ir.OpCall("pl.range", (ir.Const(3),)), (ir.Pass(),))
    with pytest.raises(InterpError, match="pl.range loop needs an index variable"):
        run_host(_module(loop), "P", "host", 1)


def test_range_loop_with_index_runs():
    loop = ir.For(ir.Var("i"), None, ir.OpCall("pl.range", (ir.Const(3),)), (ir.Pass(),))
    assert run_host(_module(loop), "P", "host", 1) == [None]


def test_printer_refuses_an_annotated_tuple_assignment():
    stmt = ir.Assign(ir.TupleExpr((ir.Var("a"), ir.Var("b"))), ir.Const(1), ir.Symbol("pl.Tensor"))
    with pytest.raises(TypeError, match="annotated assignment needs a single target"):
        print_module(_module(stmt))


def test_printer_refuses_a_non_variable_in_a_tuple_target():
    stmt = ir.Assign(ir.TupleExpr((ir.Var("a"), ir.Const(1))), ir.Const(1))
    with pytest.raises(TypeError, match="not a variable in a tuple assignment"):
        print_module(_module(stmt))
