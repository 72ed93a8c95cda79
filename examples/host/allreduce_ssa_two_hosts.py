"""SSA-style host program (loop-carried values with init_values / pl.yield_) and a
second host orchestrator. Names the pass would pick are already taken by user variables,
so fresh suffixes skip them; chained allreduce results keep their buffer's lineage."""

import pypto.language as pl
import pypto.language.distributed as pld

N = 256


@pl.program
class SsaHosts:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, data: pld.DistributedTensor[[N], pl.FP32]) -> pld.DistributedTensor[[N], pl.FP32]:
        return data

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_a(self) -> pld.DistributedTensor[[N], pl.FP32]:
        data_buf = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        __allreduce_signal_0 = pld.window(data_buf, [N], dtype=pl.FP32)
        data_0 = pld.window(data_buf, [N], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.chip_orch(data_0, device=r)
        for i, (acc,) in pl.range(0, 3, 1, init_values=(data_0,)):
            acc_1 = pld.tensor.allreduce(acc, op=pld.ReduceOp.Sum)
            acc_2 = pl.yield_(acc_1)
        data_1 = pld.tensor.allreduce(acc_2, op=pld.ReduceOp.Max)
        return data_1

    @pl.function(level=pl.Level.HOST, type=pl.FunctionType.Orchestration)
    def host_b(self, seed: pld.DistributedTensor[[N], pl.FP32]) -> pld.DistributedTensor[[N], pl.FP32]:
        other_buf = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        other = pld.window(other_buf, [N], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.chip_orch(other, device=r)
        seed = pld.tensor.allreduce(seed, op=pld.ReduceOp.Sum)
        other = pld.tensor.allreduce(other, op=pld.ReduceOp.Sum)
        return seed, other
