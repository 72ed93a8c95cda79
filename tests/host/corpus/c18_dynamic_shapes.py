# pyright: reportUndefinedVariable=false
import pypto.language as pl

ROWS = pl.dynamic("ROWS")
DIM = pl.dynamic("DIM")


@pl.program
class Dynamic:
    @pl.function(type=pl.FunctionType.InCore)
    def init(
        self,
        o: pl.Out[pl.Tensor[[ROWS, DIM], pl.FP32]],
        l: pl.Out[pl.Tensor[[ROWS, 1], pl.FP32]],
    ) -> tuple[
        pl.Tensor[[ROWS, DIM], pl.FP32],
        pl.Tensor[[ROWS, 1], pl.FP32],
    ]:
        """Pass-through that binds the dynamic shapes."""
        return o, l

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[ROWS, DIM], pl.BF16], lens: pl.Tensor[[ROWS], pl.INT32]) -> pl.Tensor[[ROWS, DIM], pl.FP32]:
        n = pl.tensor.dim(q, 0)
        for b in pl.range(n):
            cur = pl.tensor.read(lens, [b])
            blocks = (cur + 127) // 128
            o = pl.create_tensor([16, 128], dtype=pl.FP32)
            l = pl.create_tensor([16, 1], dtype=pl.FP32)
            o, l = self.init(o, l)
            for blk in pl.range(blocks):
                if blk == 0:
                    first = True
                else:
                    first = False
                if blk == blocks - 1:
                    break
                continue
        return o
