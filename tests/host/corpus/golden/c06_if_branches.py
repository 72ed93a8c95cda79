# SynthesizeAllReduceSignals output for ../c06_if_branches.py
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Branches:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[128], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, use_max: pl.Scalar[pl.BOOL]):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 2 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 2], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(512)
        d = pld.tensor.window(buf, [128], dtype=pl.FP32)
        for r in pl.range(pld.system.world_size()):
            self.chip(d, device=r)
        if use_max:
            d1 = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Max)
            out = pl.yield_(d1)
        else:
            d2 = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum, core_num=2)
            out = pl.yield_(d2)
        return out
