# SynthesizeAllReduceSignals output for ../c32_strings_and_quotes.py
"""String literals with quotes, escapes, raw and triple-quoted strings, f-strings with conversions and specs."""
import pypto.language as pl
import pypto.language.distributed as pld
MODE = "mesh"


@pl.program
class Strings:

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[32], pl.FP32]):
        pl.static_print('it\'s a "quoted" #not-a-comment \\ value')
        pl.static_print(f'shape {d.shape!r:>10} done')
        return d

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        buf = pld.tensor.alloc_window_buffer(128)
        d = pld.tensor.window(buf, [32], dtype=pl.FP32)
        label = 'single \'quotes\' and "double"'
        raw = 'C:\\path\\n'
        multi = 'three\nlines # with hash'
        d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum, mode='mesh')
        d = pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Sum, mode='mesh')
        return d
