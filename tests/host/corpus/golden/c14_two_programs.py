# SynthesizeAllReduceSignals output for ../c14_two_programs.py
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class First:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def zeta(self):
        __allreduce_signal_world_size_3 = pld.system.world_size()
        __allreduce_signal_buf_3: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_3 * 1 * pl.INT32.get_byte())
        __allreduce_signal_3 = pld.tensor.window(__allreduce_signal_buf_3, [__allreduce_signal_world_size_3, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(256)
        d = pld.tensor.window(buf, [64], dtype=pl.FP32)
        d = pld.tensor.allreduce(d, __allreduce_signal_3)
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def alpha(self):
        __allreduce_signal_world_size_1 = pld.system.world_size()
        __allreduce_signal_buf_1: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_1 * 1 * pl.INT32.get_byte())
        __allreduce_signal_1 = pld.tensor.window(__allreduce_signal_buf_1, [__allreduce_signal_world_size_1, 1], dtype=pl.INT32)
        __allreduce_signal_buf_0 = pld.tensor.alloc_window_buffer(256)
        d = pld.tensor.window(__allreduce_signal_buf_0, [64], dtype=pl.FP32)
        __allreduce_result_2 = pld.tensor.allreduce(d, __allreduce_signal_1)
        return __allreduce_result_2


@pl.program
class Second:

    @pl.function(level=pl.Level.HOST, type=pl.FunctionType.Orchestration)
    def host(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 4 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 4], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(256)
        d = pld.tensor.window(buf, [64], dtype=pl.FP32)
        d = pld.tensor.allreduce(d, __allreduce_signal_0, core_num=4)
        return d
