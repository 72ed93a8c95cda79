# SynthesizeAllReduceSignals output for ../c25_comments.py
# Copyright-style header comment kept at the top.
"""Comments everywhere: pypto keeps them through parsing and passes, so must we."""


import pypto.language as pl  # the tile language
import pypto.language.distributed as pld
SIZE = 64  # elements per rank


# The program below reduces one window.
# trailing comment on the class line
@pl.program
class Commented:
    """Docstring after a comment."""
    # leading comment of chip
    # the window
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[SIZE], pl.FP32]):
        # passes the window through
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, flag: pl.Scalar[pl.BOOL]):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        # allocate the data window
        buf = pld.tensor.alloc_window_buffer(SIZE * 4)
        d = pld.tensor.window(buf, [SIZE], dtype=pl.FP32)
        label = 'not # a comment'
        # one dispatch per rank
        for r in pl.range(pld.system.world_size()):
            # inside the loop
            self.chip(d, device=r)
        if flag:
            # then branch
            d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        else:
            # else branch: it's "quoted" and has a backslash \ too
            d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Max)
        # before the return
        return d


# after the last function
if __name__ == "__main__":
    # run nothing
    pass


# the very end
