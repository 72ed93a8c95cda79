"""A builder whose core_num is its parameter: pypto reads it as an int when it builds the program."""

import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64


def build(nr: int, cores: int):
    """A builder: nr and cores are compile-time Python ints."""

    @pl.program
    class Built:
        @pl.function(type=pl.FunctionType.Orchestration)
        def fill(self, d: pl.InOut[pld.DistributedTensor[[nr, SIZE], pl.FP32]], v: pl.Scalar[pl.FP32]):
            return pl.store(pl.add(pl.load(d, [0, 0], [nr, SIZE]), v), [0, 0], d)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self):
            buf = pld.alloc_window_buffer([nr, SIZE], dtype=pl.FP32)
            d = pld.window(buf, [nr, SIZE], dtype=pl.FP32)
            for r in pl.range(pld.world_size()):
                d = self.fill(d, r - 1.25, device=r)
            d = pld.tensor.allreduce(d, op=pld.ReduceOp.Sum, core_num=cores)
            pld.tensor.allreduce(d, op=pld.ReduceOp.Max)
            return d

    return Built
