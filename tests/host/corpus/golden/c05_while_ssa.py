# SynthesizeAllReduceSignals output for ../c05_while_ssa.py
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class WhileLoops:

    @pl.function
    def countdown(self, n: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
        x_init: pl.Scalar[pl.INT64] = 0
        for x, in pl.while_(init_values=(x_init,)):
            pl.cond(x < n)
            x_next = pl.yield_(x + 1)
        return x_next

    @pl.function
    def natural(self, n: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
        i: pl.Scalar[pl.INT64] = 0
        while i < n:
            i = i + 1
        return i

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, rounds: pl.Scalar[pl.INT64]):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(1024)
        data = pld.tensor.window(buf, [256], dtype=pl.FP32)
        for data_c, left in pl.while_(init_values=(data, rounds)):
            pl.cond(left > 0)
            data_c = pld.tensor.allreduce(data_c, __allreduce_signal_0, op=pld.ReduceOp.Sum)
            data_n, left_n = pl.yield_(data_c, left - 1)
        return data_n
