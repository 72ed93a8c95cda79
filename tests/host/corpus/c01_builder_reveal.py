"""Builder function around a program: window shapes depend on the rank count, so the
program class is created inside a factory (pypto's distributed examples do this)."""

import pypto.language as pl
import pypto.language.distributed as pld

WIDTH = 32


def make_program(ranks: int, mode: str):
    """Return the program for `ranks` devices."""
    rows, cols = (2 * (ranks - 1), ranks) if mode == "ring" else (ranks, 1)

    @pl.program
    class Reveal:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            src: pl.Tensor[[1, WIDTH], pl.FP32],
            dst: pl.Out[pl.Tensor[[1, WIDTH], pl.FP32]],
            win: pl.InOut[pld.DistributedTensor[[1, WIDTH], pl.FP32]],
            sig: pl.InOut[pld.DistributedTensor[[rows, cols], pl.INT32]],
        ) -> pl.Tensor[[1, WIDTH], pl.FP32]:
            """Stage in, reduce with the caller's signal, stage out."""
            tile = pl.load(src, [0, 0], [1, WIDTH])  # stage in
            win = pl.store(tile, [0, 0], win)
            win = pld.tensor.allreduce(win, sig, op=pld.ReduceOp.Sum, mode=mode)
            back = pl.load(win, [0, 0], [1, WIDTH])
            return pl.store(back, [0, 0], dst)

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(
            self,
            src: pl.Tensor[[1, WIDTH], pl.FP32],
            dst: pl.Out[pl.Tensor[[1, WIDTH], pl.FP32]],
            win: pl.InOut[pld.DistributedTensor[[1, WIDTH], pl.FP32]],
            sig: pl.InOut[pld.DistributedTensor[[rows, cols], pl.INT32]],
        ) -> pl.Tensor[[1, WIDTH], pl.FP32]:
            return self.kernel(src, dst, win, sig)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(
            self,
            src: pl.Tensor[[ranks, 1, WIDTH], pl.FP32],
            dst: pl.Out[pl.Tensor[[ranks, 1, WIDTH], pl.FP32]],
        ) -> pl.Tensor[[ranks, 1, WIDTH], pl.FP32]:
            win_buf = pld.alloc_window_buffer([1, WIDTH], dtype=pl.FP32)
            sig_buf = pld.alloc_window_buffer([rows, cols], dtype=pl.INT32)
            for r in pl.range(ranks):
                win = pld.window(win_buf, [1, WIDTH], dtype=pl.FP32)
                sig = pld.window(sig_buf, [rows, cols], dtype=pl.INT32)
                self.chip(src[r], dst[r], win, sig, device=r)
            win = pld.window(win_buf, [1, WIDTH], dtype=pl.FP32)
            win = pld.tensor.allreduce(win, op=pld.ReduceOp.Max)
            return dst

    return Reveal


if __name__ == "__main__":
    print(make_program(4, "mesh"))
