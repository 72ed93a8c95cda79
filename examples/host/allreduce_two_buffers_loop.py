"""Two window buffers reduced repeatedly: gradients are summed every step inside a host
loop (the shared signal is reused on every iteration, which the credit-barrier epilogue
makes safe), statistics are reduced with a max over four cores, a user-managed signal
stays explicit, and the final reduction is returned directly (lifted by the pass)."""

import pypto.language as pl
import pypto.language.distributed as pld

ROWS = 8
COLS = 128
STEPS = 4


@pl.program
class TwoBufferTraining:
    @pl.function(type=pl.FunctionType.InCore)
    def step_kernel(
        self,
        grads: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.FP32]],
        stats: pl.InOut[pld.DistributedTensor[[ROWS, 4], pl.FP32]],
        step: pl.Scalar[pl.INT32],
    ) -> pld.DistributedTensor[[ROWS, COLS], pl.FP32]:
        tile = pl.load(grads, [0, 0], [ROWS, COLS])
        if step == 0:
            tile = pl.mul(tile, 0.5)
        else:
            tile = pl.add(tile, 1.0)
        pl.store(pl.load(stats, [0, 0], [ROWS, 4]), [0, 0], stats)
        return pl.store(tile, [0, 0], grads)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_step(
        self,
        grads: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.FP32]],
        stats: pl.InOut[pld.DistributedTensor[[ROWS, 4], pl.FP32]],
        step: pl.Scalar[pl.INT32],
    ) -> pld.DistributedTensor[[ROWS, COLS], pl.FP32]:
        return self.step_kernel(grads, stats, step)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self) -> pld.DistributedTensor[[ROWS, COLS], pl.FP32]:
        grad_buf = pld.alloc_window_buffer(ROWS * COLS * pl.FP32.get_byte())
        stats_buf = pld.alloc_window_buffer(ROWS * 4 * pl.FP32.get_byte())
        user_signal_buf = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
        grads = pld.window(grad_buf, [ROWS, COLS], dtype=pl.FP32)
        stats = pld.window(stats_buf, [ROWS, 4], dtype=pl.FP32)
        user_signal = pld.window(user_signal_buf, [pld.world_size(), 1], dtype=pl.INT32)
        step = 0
        while step < STEPS:
            for r in pl.range(pld.world_size()):
                self.chip_step(grads, stats, step, device=r)
            grads = pld.tensor.allreduce(grads, op=pld.ReduceOp.Sum)
            pld.tensor.allreduce(stats, op=pld.ReduceOp.Max, core_num=4)
            step = step + 1
        stats = pld.tensor.allreduce(stats, user_signal, op=pld.ReduceOp.Max)
        return pld.tensor.allreduce(grads, op=pld.ReduceOp.Sum, mode="mesh")
