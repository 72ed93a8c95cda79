import pypto.language as pl

N = 4
TILE = 16


@pl.program
class ManualDeps:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, data: pl.Tensor[[64, 64], pl.FP32], row: pl.Scalar[pl.INDEX], out: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]):
        t = pl.load(data, [row, 0], [TILE, 64])
        return pl.store(t, [row, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        pl.static_print(f"data: {data}", "label")
        pl.static_assert(N > 2, "N too small")
        with pl.manual_scope():
            prev_tid = None
            for phase in pl.range(2):
                for branch in pl.parallel(N):
                    row = (phase * N + branch) * TILE
                    out, prev_tid = pl.submit(self.stripe, data, row, out, deps=[prev_tid])
        with pl.at(level=pl.Level.CORE_GROUP, deps=[prev_tid]) as tid_a:
            tile = pl.load(data, [0, 0], [TILE, 64])
            out[0:TILE, :] = pl.exp(tile)
        for b in pl.spmd(N):
            idx = pl.tile.get_block_idx()
            lo = max(idx * TILE, abs(-1))
            out[lo] = pl.load(data, [min(lo, 48), 0], [1, 64])
        return out
