"""A @pl.jit kernel (kept as it is) next to a program with a host orchestrator."""
import pypto.language as pl
import pypto.language.distributed as pld
import torch


@pl.jit
def row_softmax(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [64, 64])
        scratch = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        mx: pl.Tile[[64, 1], pl.FP32] = pl.row_max(t, scratch)
        e = pl.exp(pl.row_expand_sub(t, mx))
        pl.store(pl.row_expand_div(e, pl.row_sum(e, scratch)), [0, 0], out)
    return out


@pl.program
class Host:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[64], pl.FP32]):
        return d

    @pl.function(level=pl.Level.HOST, type=pl.FunctionType.Orchestration)
    def host(self):
        buf = pld.alloc_window_buffer(64 * pl.FP32.get_byte())
        d = pld.window(buf, [64], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.chip(d, device=r)
        pld.tensor.allreduce(d, op=pld.ReduceOp.Sum)
        return d


if __name__ == "__main__":
    x = torch.randn(64, 64)
    row_softmax(x, torch.zeros_like(x))
