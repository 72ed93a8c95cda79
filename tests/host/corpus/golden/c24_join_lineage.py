# SynthesizeAllReduceSignals output for ../c24_join_lineage.py
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Joins:

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, flag: pl.Scalar[pl.BOOL]):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        __allreduce_signal_world_size_1 = pld.system.world_size()
        __allreduce_signal_buf_1: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_1 * 1 * pl.INT32.get_byte())
        __allreduce_signal_1 = pld.tensor.window(__allreduce_signal_buf_1, [__allreduce_signal_world_size_1, 1], dtype=pl.INT32)
        __allreduce_signal_world_size_2 = pld.system.world_size()
        __allreduce_signal_buf_2: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_2 * 1 * pl.INT32.get_byte())
        __allreduce_signal_2 = pld.tensor.window(__allreduce_signal_buf_2, [__allreduce_signal_world_size_2, 1], dtype=pl.INT32)
        __allreduce_signal_world_size_3 = pld.system.world_size()
        __allreduce_signal_buf_3: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_3 * 1 * pl.INT32.get_byte())
        __allreduce_signal_3 = pld.tensor.window(__allreduce_signal_buf_3, [__allreduce_signal_world_size_3, 1], dtype=pl.INT32)
        a_buf = pld.tensor.alloc_window_buffer(256)
        b_buf = pld.tensor.alloc_window_buffer(256)
        a = pld.tensor.window(a_buf, [64], dtype=pl.FP32)
        b = pld.tensor.window(b_buf, [64], dtype=pl.FP32)
        if flag:
            x = pl.yield_(a)
        else:
            x = pl.yield_(b)
        x = pld.tensor.allreduce(x, __allreduce_signal_0)
        if flag:
            y = pl.yield_(a)
        else:
            y = pl.yield_(pld.tensor.window(a_buf, [64], dtype=pl.FP32))
        y = pld.tensor.allreduce(y, __allreduce_signal_1)
        a = pld.tensor.allreduce(a, __allreduce_signal_1)
        c = a
        if flag:
            c = b
        c = pld.tensor.allreduce(c, __allreduce_signal_2)
        for i, (acc,) in pl.range(4, init_values=(b,)):
            acc = pld.tensor.allreduce(acc, __allreduce_signal_3)
            acc_out = pl.yield_(acc)
        acc_out = pld.tensor.allreduce(acc_out, __allreduce_signal_3)
        return acc_out
