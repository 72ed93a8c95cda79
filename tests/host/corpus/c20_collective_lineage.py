import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Lineage:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[4, 64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, local: pld.DistributedTensor[[1, 64], pl.FP32], counts: pl.Tensor[[4], pl.INT32]):
        g_buf = pld.alloc_window_buffer(1024)
        s_buf = pld.alloc_window_buffer(64)
        v_buf = pld.alloc_window_buffer(1024)
        g = pld.window(g_buf, [4, 64], dtype=pl.FP32)
        s = pld.window(s_buf, [4, 1], dtype=pl.INT32)
        v = pld.window(v_buf, [4, 64], dtype=pl.FP32)
        gathered = pld.tensor.allgather(local, g, s)
        gathered = pld.tensor.allreduce(gathered, op=pld.ReduceOp.Sum)
        g = pld.tensor.allreduce(g, op=pld.ReduceOp.Max)
        moved = pld.tensor.all_to_all_v(gathered, v, s, counts, counts)
        alias = moved
        alias = pld.tensor.allreduce(alias)
        chained = pld.tensor.allreduce(alias)
        local = pld.tensor.allreduce(local)
        return chained
