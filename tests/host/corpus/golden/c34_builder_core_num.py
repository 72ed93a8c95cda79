# SynthesizeAllReduceSignals output for ../c34_builder_core_num.py
"""A builder whose core_num is its parameter: pypto reads it as an int when it builds the program."""
import pypto.language as pl
import pypto.language.distributed as pld
SIZE = 64


def build(nr: int, cores: int):
    """A builder: nr and cores are compile-time Python ints."""

    @pl.program
    class Built:

        @pl.function(type=pl.FunctionType.Orchestration)
        def fill(self, d: pl.InOut[pld.DistributedTensor[[nr, SIZE], pl.FP32]], v: pl.Scalar[pl.FP32]):
            return pl.store(pl.add(pl.load(d, [0, 0], [nr, SIZE]), v), [0, 0], d)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self):
            __allreduce_signal_world_size_0 = pld.system.world_size()
            __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * cores * pl.INT32.get_byte())
            __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, cores], dtype=pl.INT32)
            buf = pld.tensor.alloc_window_buffer([nr, SIZE], dtype=pl.FP32)
            d = pld.tensor.window(buf, [nr, SIZE], dtype=pl.FP32)
            for r in pl.range(pld.system.world_size()):
                d = self.fill(d, r - 1.25, device=r)
            d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum, core_num=cores)
            pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Max)
            return d

    return Built
