# SynthesizeAllReduceSignals output for ../c27_window_write.py
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class WindowWrite:

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, src: pl.Tensor[[4, 64], pl.FP32]):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        __allreduce_signal_world_size_1 = pld.system.world_size()
        __allreduce_signal_buf_1: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_1 * 1 * pl.INT32.get_byte())
        __allreduce_signal_1 = pld.tensor.window(__allreduce_signal_buf_1, [__allreduce_signal_world_size_1, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(1024)
        w = pld.tensor.window(buf, [4, 64], dtype=pl.FP32)
        w = pld.tensor.allreduce(w, __allreduce_signal_0)
        # a write into the window gives w a new value (pypto: tensor.assemble), a root of its own
        w[0, :] = src[0, :]
        w = pld.tensor.allreduce(w, __allreduce_signal_1)
        v = pld.tensor.window(buf, [4, 64], dtype=pl.FP32)
        v = pld.tensor.allreduce(v, __allreduce_signal_0)
        return w
