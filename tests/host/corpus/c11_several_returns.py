import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Returns:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, flag: pl.Scalar[pl.BOOL]):
        buf = pld.alloc_window_buffer(256)
        other_buf = pld.alloc_window_buffer(256)
        d = pld.window(buf, [64], dtype=pl.FP32)
        e = pld.window(other_buf, [64], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.chip(d, device=r)
        if flag:
            return pld.tensor.allreduce(d, op=pld.ReduceOp.Sum)
        else:
            return pld.tensor.allreduce(d, op=pld.ReduceOp.Max), pld.tensor.allreduce(e)
