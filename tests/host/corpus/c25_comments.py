# Copyright-style header comment kept at the top.
"""Comments everywhere: pypto keeps them through parsing and passes, so must we."""

import pypto.language as pl  # the tile language
import pypto.language.distributed as pld

SIZE = 64  # elements per rank


# The program below reduces one window.
@pl.program
class Commented:  # trailing comment on the class line
    """Docstring after a comment."""

    # leading comment of chip
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        d: pld.DistributedTensor[[SIZE], pl.FP32],  # the window
    ):
        return d  # passes the window through

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, flag: pl.Scalar[pl.BOOL]):
        # allocate the data window
        buf = pld.alloc_window_buffer(SIZE * 4)
        d = pld.window(buf, [SIZE], dtype=pl.FP32)
        label = "not # a comment"
        for r in pl.range(pld.world_size()):  # one dispatch per rank
            # inside the loop
            self.chip(d, device=r)
        if flag:
            # then branch
            d = pld.tensor.allreduce(d, op=pld.ReduceOp.Sum)
        # else branch: it's "quoted" and has a backslash \ too
        else:
            d = pld.tensor.allreduce(d, op=pld.ReduceOp.Max)
        # before the return
        return d
    # after the last function


if __name__ == "__main__":
    # run nothing
    pass
# the very end
