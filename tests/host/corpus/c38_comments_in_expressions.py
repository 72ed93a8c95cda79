"""Comments inside multi-line calls and conditions, after else:, and at the ends of class and module."""

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class CommentsInside:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[16], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer(
            64,  # bytes
        )
        d = pld.window(
            buf,  # the buffer
            [16],  # shape
            dtype=pl.FP32,  # element type
        )
        d = pld.tensor.allreduce(
            d,  # data
            op=pld.ReduceOp.Sum,  # sum
        )
        if (
            True  # always
        ):
            d = pld.tensor.allreduce(d)
        else:  # never
            pass
        return d  # done
    # trailing comment in class


# trailing module comment
