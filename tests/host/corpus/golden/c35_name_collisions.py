# SynthesizeAllReduceSignals output for ../c35_name_collisions.py
"""User names that look like the names the pass makes: the counter skips every taken suffix."""
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Collide:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, __allreduce_signal_1: pld.DistributedTensor[[16], pl.FP32]):
        return __allreduce_signal_1

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        __allreduce_signal_world_size_2 = pld.system.world_size()
        __allreduce_signal_buf_2: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_2 * 1 * pl.INT32.get_byte())
        __allreduce_signal_2 = pld.tensor.window(__allreduce_signal_buf_2, [__allreduce_signal_world_size_2, 1], dtype=pl.INT32)
        __allreduce_signal_world_size_3 = pld.system.world_size()
        __allreduce_signal_buf_3: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_3 * 1 * pl.INT32.get_byte())
        __allreduce_signal_3 = pld.tensor.window(__allreduce_signal_buf_3, [__allreduce_signal_world_size_3, 1], dtype=pl.INT32)
        __allreduce_signal_buf_0 = pld.tensor.alloc_window_buffer(64)
        __allreduce_result_2 = pld.tensor.window(__allreduce_signal_buf_0, [16], dtype=pl.FP32)
        other_buf = pld.tensor.alloc_window_buffer(64)
        other = pld.tensor.window(other_buf, [16], dtype=pl.FP32)
        __allreduce_result_2 = pld.tensor.allreduce(__allreduce_result_2, __allreduce_signal_2)
        pld.tensor.allreduce(other, __allreduce_signal_3, op=pld.ReduceOp.Max)
        __allreduce_result_4 = pld.tensor.allreduce(other, __allreduce_signal_3)
        return __allreduce_result_4
