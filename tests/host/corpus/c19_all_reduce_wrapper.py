import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Wrapper:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer(256)
        d = pld.window(buf, [64], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.chip(d, device=r)
        d = pld.all_reduce(d, op=pld.ReduceOp.Sum)
        d = pld.all_reduce(d, op=pld.ReduceOp.Sum, mode="ring", nranks=4)
        d = pld.tensor.allreduce(d, op=pld.ReduceOp.Sum, core_num=3)
        d = pld.tensor.allreduce(d, op=pld.ReduceOp.Sum, mode="mesh", core_num=2)
        return d
