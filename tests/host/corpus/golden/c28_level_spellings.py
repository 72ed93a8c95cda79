# SynthesizeAllReduceSignals output for ../c28_level_spellings.py
import pypto.language as pl
import pypto.language.distributed as pld
from pypto.language import FunctionType, Level, Role


@pl.program
class Spellings:

    @pl.function(level=pl.Level.NODE, role=pl.Role.Orchestrator)
    def node_alias(self):
        __allreduce_signal_world_size_2 = pld.system.world_size()
        __allreduce_signal_buf_2: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_2 * 1 * pl.INT32.get_byte())
        __allreduce_signal_2 = pld.tensor.window(__allreduce_signal_buf_2, [__allreduce_signal_world_size_2, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(256)
        d = pld.tensor.window(buf, [64], dtype=pl.FP32)
        d = pld.tensor.allreduce(d, __allreduce_signal_2)
        return d

    @pl.function(level=Level.HOST, type=FunctionType.Orchestration)
    def bare_enums(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf_b = pld.tensor.alloc_window_buffer(256)
        d = pld.tensor.window(buf_b, [64], dtype=pl.FP32)
        __allreduce_result_1 = pld.tensor.allreduce(d, __allreduce_signal_0)
        return __allreduce_result_1

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
