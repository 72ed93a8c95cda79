# SynthesizeAllReduceSignals output for ../c30_host_calls_host.py
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
        __allreduce_signal_world_size_1 = pld.system.world_size()
        __allreduce_signal_buf_1: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_1 * 1 * pl.INT32.get_byte())
        __allreduce_signal_1 = pld.tensor.window(__allreduce_signal_buf_1, [__allreduce_signal_world_size_1, 1], dtype=pl.INT32)
        data = pld.tensor.allreduce(data, __allreduce_signal_1, op=pld.ReduceOp.Sum)
        return data

    @pl.function(level=pl.Level.HOST, type=pl.FunctionType.Orchestration)
    def host_orch(self, x: pl.Tensor[[4, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[4, 1, N], pl.FP32]]):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(N * pl.FP32.get_byte())
        data = pld.tensor.window(buf, [1, N], dtype=pl.FP32)
        for r in pl.range(pld.system.world_size()):
            self.fill(x[r], data, device=r)
        data = self.reduce_into(data)
        data = pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Prod)
        for r in pl.range(pld.system.world_size()):
            self.drain(data, y[r], device=r)
        return y
