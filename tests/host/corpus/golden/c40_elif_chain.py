# SynthesizeAllReduceSignals output for ../c40_elif_chain.py
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
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(64)
        d = pld.tensor.window(buf, [16], dtype=pl.FP32)
        for r in pl.range(pld.system.world_size()):
            self.fill(d, r * 3 - 4.5, device=r)
        if mode == 0:
            d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        elif mode == 1:
            d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Max)
        elif mode == 2:
            d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Min)
        else:
            d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Prod)
        d = pld.tensor.allreduce(d, __allreduce_signal_0)
        return d
