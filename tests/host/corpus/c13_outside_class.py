import pypto.language as pl

N = pl.dynamic("N")


@pl.function(type=pl.FunctionType.InCore)
def double(x: pl.Tensor[[N, 32], pl.FP32], y: pl.Out[pl.Tensor[[N, 32], pl.FP32]]) -> pl.Tensor[[N, 32], pl.FP32]:
    """A kernel defined at module level and called by name."""
    t = pl.load(x, [0, 0], [16, 32])
    return pl.store(pl.add(t, t), [0, 0], y)


@pl.program
class UsesDouble:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, 32], pl.FP32]) -> pl.Tensor[[N, 32], pl.FP32]:
        rows = pl.tensor.dim(x, 0)
        y = pl.create_tensor([rows, 32], dtype=pl.FP32)
        for i in pl.range(0, rows, 16):
            xi = pl.slice(x, [16, 32], [i, 0])
            yi = pl.slice(y, [16, 32], [i, 0])
            yi = double(xi, yi)
            y = pl.assemble(y, yi, [i, 0])
        return y
