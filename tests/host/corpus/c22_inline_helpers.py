import pypto.language as pl


@pl.program
class Inline:
    @pl.inline
    def fma(self, a, b, c):
        return pl.add(pl.mul(a, b), c)

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        """Nested calls and an inlined helper."""
        t = pl.load(x, [0, 0], [16, 16])
        r = self.fma(t, pl.exp(pl.neg(t)), pl.tile.full([16, 16], dtype=pl.FP32, value=1.0))
        return pl.store(pl.maximum(r, pl.minimum(t, r)), [0, 0], out)
