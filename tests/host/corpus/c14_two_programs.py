import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class First:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def zeta(self):
        buf = pld.alloc_window_buffer(256)
        d = pld.window(buf, [64], dtype=pl.FP32)
        d = pld.tensor.allreduce(d)
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def alpha(self):
        __allreduce_signal_buf_0 = pld.alloc_window_buffer(256)
        d = pld.window(__allreduce_signal_buf_0, [64], dtype=pl.FP32)
        return pld.tensor.allreduce(d)


@pl.program
class Second:
    @pl.function(level=pl.Level.HOST, type=pl.FunctionType.Orchestration)
    def host(self):
        buf = pld.alloc_window_buffer(256)
        d = pld.window(buf, [64], dtype=pl.FP32)
        d = pld.tensor.allreduce(d, core_num=4)
        return d
