import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Parallel:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[8, 32], pl.FP32], y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
        for i in pl.parallel(0, 8, 1, chunk=2):
            t = pl.load(x, [i, 0], [1, 32])
            y = pl.store(pl.mul(t, 2.0), [i, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[32], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer(128)
        d = pld.window(buf, [32], dtype=pl.FP32)
        for r in pl.parallel(pld.world_size()):
            self.chip(d, device=r)
            d = pld.tensor.allreduce(d)
        return d
