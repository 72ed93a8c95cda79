"""Keyword spellings: size= / shape= of the window ops, target= / signal= of allreduce, pld.all_reduce."""

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Keywords:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[16], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer(size=64)
        d = pld.window(buf, shape=[16], dtype=pl.FP32)
        d = pld.tensor.allreduce(target=d, op=pld.ReduceOp.Sum)
        d = pld.all_reduce(d, op=pld.ReduceOp.Max)
        d = pld.tensor.allreduce(op=pld.ReduceOp.Min, target=d)
        return d
