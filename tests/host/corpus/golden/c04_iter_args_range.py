# SynthesizeAllReduceSignals output for ../c04_iter_args_range.py
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Accumulate:

    @pl.function(type=pl.FunctionType.InCore)
    def running_sum(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]):
        zero = pl.tile.full([1, 64], dtype=pl.FP32, value=0.0)
        for i, (acc,) in pl.range(0, 16, 1, init_values=(zero,)):
            row = pl.load(x, [i, 0], [1, 64])
            nxt = pl.add(acc, row)
            acc_out = pl.yield_(nxt)
        return pl.store(acc_out, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, steps: pl.Scalar[pl.INT64]):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(256)
        d0 = pld.tensor.window(buf, [64], dtype=pl.FP32)
        for k, (d, n) in pl.range(steps, init_values=(d0, 0)):
            self.chip(d, device=k % pld.system.world_size())
            d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum)
            d_out, n_out = pl.yield_(d, n + 1)
        return d_out
