import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Branches:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[128], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, use_max: pl.Scalar[pl.BOOL]):
        buf = pld.alloc_window_buffer(512)
        d = pld.window(buf, [128], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.chip(d, device=r)
        if use_max:
            d1 = pld.tensor.allreduce(d, op=pld.ReduceOp.Max)
            out = pl.yield_(d1)
        else:
            d2 = pld.tensor.allreduce(d, op=pld.ReduceOp.Sum, core_num=2)
            out = pl.yield_(d2)
        return out
