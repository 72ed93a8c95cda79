# SynthesizeAllReduceSignals output for ../c37_semicolons.py
"""Statements sharing lines with semicolons, a one-line if."""
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Semi:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[16], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        # both
        buf = pld.tensor.alloc_window_buffer(64)
        d = pld.tensor.window(buf, [16], dtype=pl.FP32)
        x = 1
        y = 2
        d = pld.tensor.allreduce(d, __allreduce_signal_0)
        d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Max)
        if x < y:
            d = pld.tensor.allreduce(d, __allreduce_signal_0)
        return d
