import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class TupleElement:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self, a: pld.DistributedTensor[[64], pl.FP32], b: pld.DistributedTensor[[64], pl.FP32]
    ) -> tuple[pld.DistributedTensor[[64], pl.FP32], pld.DistributedTensor[[64], pl.FP32]]:
        return a, b

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        a_buf = pld.alloc_window_buffer(256)
        b_buf = pld.alloc_window_buffer(256)
        a = pld.window(a_buf, [64], dtype=pl.FP32)
        b = pld.window(b_buf, [64], dtype=pl.FP32)
        pair = self.chip(a, b, device=0)
        first = pld.tensor.allreduce(pair[0], op=pld.ReduceOp.Sum)
        second = pld.tensor.allreduce(pair[1], op=pld.ReduceOp.Sum)
        again = pld.tensor.allreduce(pair[0], op=pld.ReduceOp.Sum)
        return first, second, again
