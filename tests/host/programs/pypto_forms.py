"""pl.dynamic dimensions as values, pl.pipeline and pl.split_aiv loops, a list comprehension
argument, a [S] window passed to a [1, S] parameter and a rank-1 signal longer than the
world (tests/host/test_ops.py)."""

import pypto.language as pl
import pypto.language.distributed as pld

S = 8
NR = pl.dynamic("NR")


@pl.program
class Forms:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, row: pld.DistributedTensor[[1, S], pl.FP32], k: pl.Scalar[pl.INT32]):
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            row[0, aiv_id] = k + aiv_id
        return row

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, S], pl.FP32]):
        buf = pld.alloc_window_buffer(S * pl.FP32.get_byte())
        w = pld.window(buf, [S], dtype=pl.FP32)
        sig_buf = pld.alloc_window_buffer((NR + 3) * pl.INT32.get_byte())
        sig = pld.window(sig_buf, [NR + 3], dtype=pl.INT32)
        for i in pl.pipeline(0, NR, 1, stage=2):
            w = self.chip(w, i * 10, device=i)
        w = pld.tensor.allreduce(w, sig, op=pld.ReduceOp.Sum)
        extra = pl.tile.full([d for d in [S, 0] if d > 0], dtype=pl.FP32, value=NR)
        w = pl.store(pl.tensor.add(pl.load(w, [0], [S]), pl.tensor.slice(extra, [S], [0])), [0], w)
        return w
