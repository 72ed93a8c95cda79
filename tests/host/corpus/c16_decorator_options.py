import pypto.language as pl


@pl.program
class Options:
    @pl.function(type=pl.FunctionType.InCore, strict_ssa=True)
    def split_kernel(self, x: pl.Tensor[[32, 32], pl.BF16], y: pl.Out[pl.Tensor[[32, 32], pl.BF16]]):
        pl.func_attr({"split": pl.SplitMode.UP_DOWN, "vector_cores": 2})
        t = pl.load(x, [0, 0], [32, 32])
        return pl.store(t, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
    def main(self, x: pl.Tensor[[32, 32], pl.BF16]) -> pl.Tensor[[32, 32], pl.BF16]:
        y = pl.create_tensor([32, 32], dtype=pl.BF16)
        with pl.scope():
            y = self.split_kernel(x, y)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def callback(x: pl.Tensor[[32, 32], pl.BF16]):
        """Bound at run time."""
        ...
