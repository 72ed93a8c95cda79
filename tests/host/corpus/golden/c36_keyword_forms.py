# SynthesizeAllReduceSignals output for ../c36_keyword_forms.py
"""Keyword spellings: size= / shape= of the window ops, target= / signal= of allreduce, pld.all_reduce."""
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Keywords:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[16], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(size=64)
        d = pld.tensor.window(buf, shape=[16], dtype=pl.FP32)
        d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Max)
        d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Min)
        return d
