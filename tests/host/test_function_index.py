"""The function index (tilecc/host/function_index.py): one walk finds every name and call
of a function, with its device scope, and a function a pass rebuilt gets its own index."""

from __future__ import annotations

import dataclasses

from tilecc.host import ir
from tilecc.host.function_index import function_index
from tilecc.host.parser import parse_module

from .conftest import HEADER

SOURCE = HEADER + """\
@pl.program
class P:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, d: pld.DistributedTensor[[N], pl.FP32], k: pl.Scalar[pl.INT32] = K) -> R:
        buf = pld.alloc_window_buffer(64)
        C[i] = pld.window(buf, [16], dtype=pl.FP32)
        for j, (acc,) in pl.range(4, init_values=(d,)):
            with pl.incore() as s:
                x = self.chip(acc, [f(y) for y in ys])
            acc2 = pl.yield_(x)
        for r in pl.spmd(2):
            z = pl.tensor.add(x, x)
        return pld.tensor.allreduce(acc2)
"""


def test_names_and_calls_in_visit_order_with_their_device_scope():
    func = parse_module(SOURCE).programs[0].functions[0]
    index = function_index(func)
    bound = {"d", "k", "buf", "C", "j", "acc", "s", "x", "acc2", "r", "z"}
    assert index.bound == bound
    assert index.names == bound | {"N", "K", "R", "y", "ys", "f"}   # (an index of a written window is not walked)
    shown = [(call.op if isinstance(call, ir.OpCall) else call.func, device) for call, device in index.calls]
    assert shown == [("pld.tensor.alloc_window_buffer", False), ("pld.tensor.window", False),
                     ("pl.range", False), ("pl.incore", False), ("chip", True), ("pl.yield_", False),
                     ("pl.spmd", False), ("pl.tensor.add", True), ("pld.tensor.allreduce", False)]
    assert function_index(func) is index   # kept on the function, not walked again


def test_a_rebuilt_function_gets_an_index_of_its_own():
    func = parse_module(SOURCE).programs[0].functions[0]
    function_index(func)
    rebuilt = dataclasses.replace(func, body=func.body[-1:])
    assert rebuilt == dataclasses.replace(func, body=func.body[-1:])
    assert [call.op for call, _ in function_index(rebuilt).calls] == ["pld.tensor.allreduce"]
    assert "buf" not in function_index(rebuilt).names
