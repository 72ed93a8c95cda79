# SynthesizeAllReduceSignals output for ../c42_tabs.py
"""A file indented with tabs."""
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Tabs:

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(64)
        d = pld.tensor.window(buf, [16], dtype=pl.FP32)
        d = pld.tensor.allreduce(d, __allreduce_signal_0)
        return d
