# SynthesizeAllReduceSignals output for ../c20_collective_lineage.py
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Lineage:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[4, 64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, local: pld.DistributedTensor[[1, 64], pl.FP32], counts: pl.Tensor[[4], pl.INT32]):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        __allreduce_signal_world_size_1 = pld.system.world_size()
        __allreduce_signal_buf_1: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_1 * 1 * pl.INT32.get_byte())
        __allreduce_signal_1 = pld.tensor.window(__allreduce_signal_buf_1, [__allreduce_signal_world_size_1, 1], dtype=pl.INT32)
        __allreduce_signal_world_size_2 = pld.system.world_size()
        __allreduce_signal_buf_2: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_2 * 1 * pl.INT32.get_byte())
        __allreduce_signal_2 = pld.tensor.window(__allreduce_signal_buf_2, [__allreduce_signal_world_size_2, 1], dtype=pl.INT32)
        g_buf = pld.tensor.alloc_window_buffer(1024)
        s_buf = pld.tensor.alloc_window_buffer(64)
        v_buf = pld.tensor.alloc_window_buffer(1024)
        g = pld.tensor.window(g_buf, [4, 64], dtype=pl.FP32)
        s = pld.tensor.window(s_buf, [4, 1], dtype=pl.INT32)
        v = pld.tensor.window(v_buf, [4, 64], dtype=pl.FP32)
        gathered = pld.tensor.allgather(local, g, s)
        gathered = pld.tensor.allreduce(gathered, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        g = pld.tensor.allreduce(g, __allreduce_signal_0, op=pld.ReduceOp.Max)
        moved = pld.tensor.all_to_all_v(gathered, v, s, counts, counts)
        alias = moved
        alias = pld.tensor.allreduce(alias, __allreduce_signal_1)
        chained = pld.tensor.allreduce(alias, __allreduce_signal_1)
        local = pld.tensor.allreduce(local, __allreduce_signal_2)
        return chained
