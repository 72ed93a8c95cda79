import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Nested:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pld.DistributedTensor[[64], pl.FP32], b: pld.DistributedTensor[[64], pl.FP32]):
        return a

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, outer: pl.Scalar[pl.INT64], inner: pl.Scalar[pl.INT64]):
        a_buf = pld.alloc_window_buffer(256)
        b_buf = pld.alloc_window_buffer(256)
        a = pld.window(a_buf, [64], dtype=pl.FP32)
        b = pld.window(b_buf, [64], dtype=pl.FP32)
        for i in pl.range(outer):
            for j in pl.range(inner):
                for r in pl.range(pld.world_size()):
                    self.chip(a, b, device=r)
                b = pld.tensor.allreduce(b, op=pld.ReduceOp.Min)
            a = pld.tensor.allreduce(a, op=pld.ReduceOp.Sum)
        return a
