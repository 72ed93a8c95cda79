"""Windows passed through tuples and returned as a tuple by a dispatched chip function."""

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Tuples:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pld.DistributedTensor[[64], pl.FP32], b: pld.DistributedTensor[[64], pl.FP32]):
        return a, b

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self):
        buf_a = pld.alloc_window_buffer(256)
        buf_b = pld.alloc_window_buffer(256)
        pair = (pld.window(buf_a, [64], dtype=pl.FP32), pld.window(buf_b, [64], dtype=pl.FP32))
        a, b = pair
        for r in pl.range(pld.world_size()):
            a, b = self.chip(a, b, device=r)
        a = pld.tensor.allreduce(a, op=pld.ReduceOp.Sum)
        b = pld.tensor.allreduce(b, op=pld.ReduceOp.Sum)
        c = pair[0]
        c = pld.tensor.allreduce(c)
        return a, b, c
