import pypto.language as pl
import pypto.language.distributed as pld
from pypto.language import FunctionType, Level, Role


@pl.program
class Spellings:
    @pl.function(level=pl.Level.NODE, role=pl.Role.Orchestrator)
    def node_alias(self):
        buf = pld.alloc_window_buffer(256)
        d = pld.window(buf, [64], dtype=pl.FP32)
        d = pld.tensor.allreduce(d)
        return d

    @pl.function(level=Level.HOST, type=FunctionType.Orchestration)
    def bare_enums(self):
        buf_b = pld.alloc_window_buffer(256)
        d = pld.window(buf_b, [64], dtype=pl.FP32)
        return pld.tensor.allreduce(d)

    @pl.function(level=pl.Level.CHIP, role=Role.Orchestrator)
    def chip_level(self, d: pld.DistributedTensor[[64], pl.FP32]):
        d = pld.tensor.allreduce(d)
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def host_worker(self, d: pld.DistributedTensor[[64], pl.FP32]):
        d = pld.tensor.allreduce(d)
        return d

    @pl.function(level=None, type=pl.FunctionType.Orchestration)
    def no_level(self, d: pld.DistributedTensor[[64], pl.FP32]):
        d = pld.tensor.allreduce(d)
        return d
