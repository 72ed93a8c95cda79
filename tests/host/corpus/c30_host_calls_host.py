"""A host orchestrator calling another one (pypto: a host-level call, no device=), each with its own signal; Prod."""

import pypto.language as pl
import pypto.language.distributed as pld

N = 8


@pl.program
class Calls:
    @pl.function(type=pl.FunctionType.Orchestration)
    def fill(self, x: pl.Tensor[[1, N], pl.FP32], win: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]]):
        return pl.store(pl.load(x, [0, 0], [1, N]), [0, 0], win)

    @pl.function(type=pl.FunctionType.Orchestration)
    def drain(self, win: pld.DistributedTensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        return pl.store(pl.load(win, [0, 0], [1, N]), [0, 0], y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def reduce_into(self, data: pld.DistributedTensor[[1, N], pl.FP32]):
        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
        return data

    @pl.function(level=pl.Level.HOST, type=pl.FunctionType.Orchestration)
    def host_orch(self, x: pl.Tensor[[4, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[4, 1, N], pl.FP32]]):
        buf = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        data = pld.window(buf, [1, N], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.fill(x[r], data, device=r)
        data = self.reduce_into(data)
        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Prod)
        for r in pl.range(pld.world_size()):
            self.drain(data, y[r], device=r)
        return y
