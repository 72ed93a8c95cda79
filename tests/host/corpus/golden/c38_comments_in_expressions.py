# SynthesizeAllReduceSignals output for ../c38_comments_in_expressions.py
"""Comments inside multi-line calls and conditions, after else:, and at the ends of class and module."""
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class CommentsInside:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[16], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        # bytes
        buf = pld.tensor.alloc_window_buffer(64)
        # the buffer
        # shape
        # element type
        d = pld.tensor.window(buf, [16], dtype=pl.FP32)
        # data
        # sum
        d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        # always
        if True:
            d = pld.tensor.allreduce(d, __allreduce_signal_0)
        else:
            # never
            pass
        # done
        return d


# trailing comment in class
# trailing module comment
