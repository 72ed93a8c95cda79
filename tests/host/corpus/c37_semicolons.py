"""Statements sharing lines with semicolons, a one-line if."""

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Semi:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[16], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer(64); d = pld.window(buf, [16], dtype=pl.FP32)  # both
        x = 1; y = 2
        d = pld.tensor.allreduce(d); d = pld.tensor.allreduce(d, op=pld.ReduceOp.Max)
        if x < y: d = pld.tensor.allreduce(d)
        return d
