import pypto.language as pl


@pl.program
class Scopes:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        y = pl.create_tensor([64, 64], dtype=pl.FP32)
        with pl.scope(mode=pl.ScopeMode.MANUAL) as sc:
            for i in pl.range(4):
                with pl.incore():
                    t = pl.load(x, [i * 16, 0], [16, 64])
                    y = pl.store(pl.exp(t), [i * 16, 0], y)
        with pl.at(level=pl.Level.CORE_GROUP):
            pass
        return y
