# SynthesizeAllReduceSignals output for ../c39_ssa_while.py
"""Loop-carried windows through pl.range(init_values=) and the SSA pl.while_ with pl.cond: one lineage."""
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class SsaLoops:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[16], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(64)
        d0 = pld.tensor.window(buf, [16], dtype=pl.FP32)
        for i, (acc,) in pl.range(0, 4, 2, init_values=(d0,)):
            acc2 = pld.tensor.allreduce(acc, __allreduce_signal_0, op=pld.ReduceOp.Sum)
            out = pl.yield_(acc2)
        for acc3, k in pl.while_(init_values=(out, 0)):
            pl.cond(k < 3)
            acc4 = pld.tensor.allreduce(acc3, __allreduce_signal_0)
            acc5, k2 = pl.yield_(acc4, k + 1)
        return acc5
