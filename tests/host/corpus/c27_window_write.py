import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class WindowWrite:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, src: pl.Tensor[[4, 64], pl.FP32]):
        buf = pld.alloc_window_buffer(1024)
        w = pld.window(buf, [4, 64], dtype=pl.FP32)
        w = pld.tensor.allreduce(w)
        # a write into the window gives w a new value (pypto: tensor.assemble), a root of its own
        w[0, :] = src[0, :]
        w = pld.tensor.allreduce(w)
        v = pld.window(buf, [4, 64], dtype=pl.FP32)
        v = pld.tensor.allreduce(v)
        return w
