"""Gradients summed, activation statistics max-reduced: two buffers, two signals."""

import pypto.language as pl
import pypto.language.distributed as pld

N = 16


@pl.program
class TwoBuffers:
    @pl.function(type=pl.FunctionType.Orchestration)
    def publish(
        self,
        x: pl.Tensor[[1, N], pl.FP32],
        win: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
    ) -> pld.DistributedTensor[[1, N], pl.FP32]:
        t = pl.load(x, [0, 0], [1, N])
        return pl.store(t, [0, 0], win)

    @pl.function(type=pl.FunctionType.Orchestration)
    def collect(
        self,
        win: pld.DistributedTensor[[1, N], pl.FP32],
        y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
    ) -> pl.Tensor[[1, N], pl.FP32]:
        t = pl.load(win, [0, 0], [1, N])
        return pl.store(t, [0, 0], y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        grads_in: pl.Tensor[[4, 1, N], pl.FP32],
        stats_in: pl.Tensor[[4, 1, N], pl.FP32],
        grads_out: pl.Out[pl.Tensor[[4, 1, N], pl.FP32]],
        stats_out: pl.Out[pl.Tensor[[4, 1, N], pl.FP32]],
    ):
        grad_buf = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        stat_buf = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        grads = pld.window(grad_buf, [1, N], dtype=pl.FP32)
        stats = pld.window(stat_buf, [1, N], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.publish(grads_in[r], grads, device=r)
            self.publish(stats_in[r], stats, device=r)
        grads = pld.tensor.allreduce(grads, op=pld.ReduceOp.Sum)
        stats = pld.tensor.allreduce(stats, op=pld.ReduceOp.Max)
        stats = pld.tensor.allreduce(stats, op=pld.ReduceOp.Min)
        for r in pl.range(pld.world_size()):
            self.collect(grads, grads_out[r], device=r)
            self.collect(stats, stats_out[r], device=r)
        return grads_out, stats_out
