# SynthesizeAllReduceSignals output for ../c08_parallel.py
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Parallel:

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[8, 32], pl.FP32], y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
        for i in pl.parallel(0, 8, 1, chunk=2):
            t = pl.load(x, [i, 0], [1, 32])
            y = pl.store(pl.mul(t, 2.0), [i, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[32], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(128)
        d = pld.tensor.window(buf, [32], dtype=pl.FP32)
        for r in pl.parallel(pld.system.world_size()):
            self.chip(d, device=r)
            d = pld.tensor.allreduce(d, __allreduce_signal_0)
        return d
