# SynthesizeAllReduceSignals output for ../c23_explicit_return.py
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
        buf = pld.tensor.alloc_window_buffer(256)
        sbuf = pld.tensor.alloc_window_buffer(pld.system.world_size() * pl.INT32.get_byte())
        d = pld.tensor.window(buf, [64], dtype=pl.FP32)
        s = pld.tensor.window(sbuf, [pld.system.world_size(), 1], dtype=pl.INT32)
        __allreduce_result_0 = pld.tensor.allreduce(d, s, op=pld.ReduceOp.Sum)
        return __allreduce_result_0
