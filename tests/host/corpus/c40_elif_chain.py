"""An if / elif / else chain choosing the reduce op of one buffer: one signal for all."""

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Elif:
    @pl.function(type=pl.FunctionType.Orchestration)
    def fill(self, win: pl.InOut[pld.DistributedTensor[[16], pl.FP32]], value: pl.Scalar[pl.FP32]):
        t = pl.load(win, [0], [16])
        t = pl.add(t, value)
        return pl.store(t, [0], win)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, mode: pl.Scalar[pl.INT32]):
        buf = pld.alloc_window_buffer(64)
        d = pld.window(buf, [16], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.fill(d, r * 3 - 4.5, device=r)
        if mode == 0:
            d = pld.tensor.allreduce(d, op=pld.ReduceOp.Sum)
        elif mode == 1:
            d = pld.tensor.allreduce(d, op=pld.ReduceOp.Max)
        elif mode == 2:
            d = pld.tensor.allreduce(d, op=pld.ReduceOp.Min)
        else:
            d = pld.tensor.allreduce(d, op=pld.ReduceOp.Prod)
        d = pld.tensor.allreduce(d)
        return d
