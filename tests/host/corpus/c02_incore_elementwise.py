import pypto.language as pl


@pl.program
class AddMul:
    """Element-wise a + b and a * b on 128x128 tiles, returned as a tuple."""

    @pl.function(type=pl.FunctionType.InCore)
    def add_mul(
        self,
        a: pl.Tensor[[128, 128], pl.FP32],
        b: pl.Tensor[[128, 128], pl.FP32],
        total: pl.Out[pl.Tensor[[128, 128], pl.FP32]],
        prod: pl.Out[pl.Tensor[[128, 128], pl.FP32]],
    ) -> tuple[pl.Tensor[[128, 128], pl.FP32], pl.Tensor[[128, 128], pl.FP32]]:
        ta: pl.Tile[[128, 128], pl.FP32] = pl.load(a, [0, 0], [128, 128])
        tb = pl.load(b, [0, 0], [128, 128], target_memory=pl.MemorySpace.Vec)
        s = pl.add(ta, tb)
        m = pl.mul(ta, tb)
        total = pl.store(s, [0, 0], total)
        prod = pl.store(m, [0, 0], prod)
        return total, prod

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32]
    ) -> tuple[pl.Tensor[[128, 128], pl.FP32], pl.Tensor[[128, 128], pl.FP32]]:
        total = pl.create_tensor([128, 128], dtype=pl.FP32)
        prod = pl.create_tensor([128, 128], dtype=pl.FP32)
        total, prod = self.add_mul(a, b, total, prod)
        return total, prod
