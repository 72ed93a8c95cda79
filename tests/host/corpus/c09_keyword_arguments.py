import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Keywords:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf: pl.Ptr = pld.alloc_window_buffer(256)
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        d = pld.window(buf, [64], dtype=pl.FP32)
        sig = pld.window(sig_buf, [pld.world_size(), 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip(d, device=r)
        d = pld.tensor.allreduce(target=d, op=pld.ReduceOp.Sum)
        d = pld.tensor.allreduce(d, signal=sig, op=pld.ReduceOp.Max)
        d = pld.tensor.allreduce(target=d, signal=sig, mode="mesh")
        d = pld.tensor.allreduce(d, sig, op=pld.ReduceOp.Prod)
        return d
