# SynthesizeAllReduceSignals output for ../c07_nested_loops.py
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Nested:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pld.DistributedTensor[[64], pl.FP32], b: pld.DistributedTensor[[64], pl.FP32]):
        return a

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, outer: pl.Scalar[pl.INT64], inner: pl.Scalar[pl.INT64]):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        __allreduce_signal_world_size_1 = pld.system.world_size()
        __allreduce_signal_buf_1: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_1 * 1 * pl.INT32.get_byte())
        __allreduce_signal_1 = pld.tensor.window(__allreduce_signal_buf_1, [__allreduce_signal_world_size_1, 1], dtype=pl.INT32)
        a_buf = pld.tensor.alloc_window_buffer(256)
        b_buf = pld.tensor.alloc_window_buffer(256)
        a = pld.tensor.window(a_buf, [64], dtype=pl.FP32)
        b = pld.tensor.window(b_buf, [64], dtype=pl.FP32)
        for i in pl.range(outer):
            for j in pl.range(inner):
                for r in pl.range(pld.system.world_size()):
                    self.chip(a, b, device=r)
                b = pld.tensor.allreduce(b, __allreduce_signal_0, op=pld.ReduceOp.Min)
            a = pld.tensor.allreduce(a, __allreduce_signal_1, op=pld.ReduceOp.Sum)
        return a
