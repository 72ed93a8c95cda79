"""User names that look like the names the pass makes: the counter skips every taken suffix."""

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Collide:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, __allreduce_signal_1: pld.DistributedTensor[[16], pl.FP32]):
        return __allreduce_signal_1

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        __allreduce_signal_buf_0 = pld.alloc_window_buffer(64)
        __allreduce_result_2 = pld.window(__allreduce_signal_buf_0, [16], dtype=pl.FP32)
        other_buf = pld.alloc_window_buffer(64)
        other = pld.window(other_buf, [16], dtype=pl.FP32)
        __allreduce_result_2 = pld.tensor.allreduce(__allreduce_result_2)
        pld.tensor.allreduce(other, op=pld.ReduceOp.Max)
        return pld.tensor.allreduce(other)
