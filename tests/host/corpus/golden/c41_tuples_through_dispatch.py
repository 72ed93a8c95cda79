# SynthesizeAllReduceSignals output for ../c41_tuples_through_dispatch.py
"""Windows passed through tuples and returned as a tuple by a dispatched chip function."""
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Tuples:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pld.DistributedTensor[[64], pl.FP32], b: pld.DistributedTensor[[64], pl.FP32]):
        return (a, b)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        __allreduce_signal_world_size_1 = pld.system.world_size()
        __allreduce_signal_buf_1: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_1 * 1 * pl.INT32.get_byte())
        __allreduce_signal_1 = pld.tensor.window(__allreduce_signal_buf_1, [__allreduce_signal_world_size_1, 1], dtype=pl.INT32)
        __allreduce_signal_world_size_2 = pld.system.world_size()
        __allreduce_signal_buf_2: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_2 * 1 * pl.INT32.get_byte())
        __allreduce_signal_2 = pld.tensor.window(__allreduce_signal_buf_2, [__allreduce_signal_world_size_2, 1], dtype=pl.INT32)
        buf_a = pld.tensor.alloc_window_buffer(256)
        buf_b = pld.tensor.alloc_window_buffer(256)
        pair = (pld.tensor.window(buf_a, [64], dtype=pl.FP32), pld.tensor.window(buf_b, [64], dtype=pl.FP32))
        a, b = pair
        for r in pl.range(pld.system.world_size()):
            a, b = self.chip(a, b, device=r)
        a = pld.tensor.allreduce(a, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        b = pld.tensor.allreduce(b, __allreduce_signal_1, op=pld.ReduceOp.Sum)
        c = pair[0]
        c = pld.tensor.allreduce(c, __allreduce_signal_2)
        return (a, b, c)
