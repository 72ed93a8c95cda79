# SynthesizeAllReduceSignals output for ../c31_line_continuations.py
"""Backslash continuations, calls and headers split over lines, trailing commas, parenthesised expressions."""
import pypto.language as pl
import pypto.language.distributed as pld
ROWS, COLS = 4, 16


BYTES = ROWS * \
    COLS * 4


@pl.program
class Continued:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[ROWS, COLS], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(BYTES)
        d = pld.tensor.window(buf, [ROWS, COLS], dtype=pl.FP32)
        for r in pl.range(pld.system.world_size()):
            self.chip(d, device=r)
        d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        total = ROWS * COLS + 0
        d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Max)
        return d
