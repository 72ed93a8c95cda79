"""Backslash continuations, calls and headers split over lines, trailing commas, parenthesised expressions."""

import pypto.language as pl
import pypto.language.distributed as pld

ROWS, COLS = 4, 16
BYTES = ROWS * \
    COLS * 4


@pl.program
class Continued:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[ROWS, COLS], pl.FP32],):
        return d

    @pl.function(
        level=pl.Level.HOST,
        role=pl.Role.Orchestrator,
    )
    def host(
        self,
    ):
        buf = pld.alloc_window_buffer(
            BYTES,
        )
        d = pld.window(buf,
                       [ROWS,
                        COLS],
                       dtype=pl.FP32,)
        for r in pl.range(
                pld.world_size()):
            self.chip(d,
                      device=r,)
        d = pld.tensor.allreduce(d, \
            op=pld.ReduceOp.Sum)
        total = (ROWS
                 * COLS
                 + 0)
        d = (pld.tensor.allreduce(d, op=pld.ReduceOp.Max))
        return d
