# SynthesizeAllReduceSignals output for ../c11_several_returns.py
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Returns:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, flag: pl.Scalar[pl.BOOL]):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        __allreduce_signal_world_size_1 = pld.system.world_size()
        __allreduce_signal_buf_1: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_1 * 1 * pl.INT32.get_byte())
        __allreduce_signal_1 = pld.tensor.window(__allreduce_signal_buf_1, [__allreduce_signal_world_size_1, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(256)
        other_buf = pld.tensor.alloc_window_buffer(256)
        d = pld.tensor.window(buf, [64], dtype=pl.FP32)
        e = pld.tensor.window(other_buf, [64], dtype=pl.FP32)
        for r in pl.range(pld.system.world_size()):
            self.chip(d, device=r)
        if flag:
            __allreduce_result_2 = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum)
            return __allreduce_result_2
        else:
            __allreduce_result_3 = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Max)
            __allreduce_result_4 = pld.tensor.allreduce(e, __allreduce_signal_1)
            return (__allreduce_result_3, __allreduce_result_4)
