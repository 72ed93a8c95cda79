import pypto.language as pl
import pypto.language.distributed as pld


class Plain:
    """Made a program below by calling pl.program on the class."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer(256)
        d = pld.window(buf, [64], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.chip(d, device=r)
        d = pld.tensor.allreduce(d)
        return d


Program = pl.program(Plain)
