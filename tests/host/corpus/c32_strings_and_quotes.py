"""String literals with quotes, escapes, raw and triple-quoted strings, f-strings with conversions and specs."""

import pypto.language as pl
import pypto.language.distributed as pld

MODE = "mesh"


@pl.program
class Strings:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[32], pl.FP32]):
        pl.static_print("it's a \"quoted\" #not-a-comment \\ value")
        pl.static_print(f"shape {d.shape!r:>10} done")
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer(128)
        d = pld.window(buf, [32], dtype=pl.FP32)
        label = 'single \'quotes\' and "double"'
        raw = r"C:\path\n"
        multi = """three
lines # with hash"""
        d = pld.tensor.allreduce(d, op=pld.ReduceOp.Sum, mode="mesh")
        d = pld.tensor.allreduce(d, op=pld.ReduceOp.Sum, mode='mesh')
        return d
