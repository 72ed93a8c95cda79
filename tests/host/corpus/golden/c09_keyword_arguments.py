# SynthesizeAllReduceSignals output for ../c09_keyword_arguments.py
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Keywords:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf: pl.Ptr = pld.tensor.alloc_window_buffer(256)
        sig_buf = pld.tensor.alloc_window_buffer(pld.system.world_size() * 4)
        d = pld.tensor.window(buf, [64], dtype=pl.FP32)
        sig = pld.tensor.window(sig_buf, [pld.system.world_size(), 1], dtype=pl.INT32)
        for r in pl.range(pld.system.world_size()):
            self.chip(d, device=r)
        d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        d = pld.tensor.allreduce(d, sig, op=pld.ReduceOp.Max)
        d = pld.tensor.allreduce(d, sig, mode='mesh')
        d = pld.tensor.allreduce(d, sig, op=pld.ReduceOp.Prod)
        return d
