import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class ExplicitReturn:
    @pl.function(type=pl.FunctionType.InCore)
    def incore(self, d: pl.InOut[pld.DistributedTensor[[64], pl.FP32]], s: pl.InOut[pld.DistributedTensor[[4, 1], pl.INT32]]):
        d = pld.tensor.allreduce(d, s, op=pld.ReduceOp.Sum)
        return pld.tensor.allreduce(d, s)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer(256)
        sbuf = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
        d = pld.window(buf, [64], dtype=pl.FP32)
        s = pld.window(sbuf, [pld.world_size(), 1], dtype=pl.INT32)
        return pld.tensor.allreduce(d, s, op=pld.ReduceOp.Sum)
