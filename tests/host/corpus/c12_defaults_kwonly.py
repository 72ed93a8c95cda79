import pypto.language as pl

TILE = 64


@pl.program
class Defaults:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(
        self,
        x: pl.Tensor[[TILE, TILE], pl.FP16],
        out: pl.Out[pl.Tensor[[TILE, TILE], pl.FP16]],
        factor: pl.Scalar[pl.FP32] = 1.0,
        *,
        rows: int = TILE,
        cols=TILE,
        bias: pl.Scalar[pl.FP32],
    ) -> pl.Tensor[[TILE, TILE], pl.FP16]:
        t = pl.load(x, [0, 0], [rows, cols])
        t = pl.cast(pl.add(pl.mul(pl.cast(t, target_type=pl.FP32), factor), bias), target_type=pl.FP16)
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[TILE, TILE], pl.FP16], out: pl.Out[pl.Tensor[[TILE, TILE], pl.FP16]]):
        out = self.scale(x, out, 0.5, bias=-2.0)
        return out
