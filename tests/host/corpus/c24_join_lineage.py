import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Joins:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, flag: pl.Scalar[pl.BOOL]):
        a_buf = pld.alloc_window_buffer(256)
        b_buf = pld.alloc_window_buffer(256)
        a = pld.window(a_buf, [64], dtype=pl.FP32)
        b = pld.window(b_buf, [64], dtype=pl.FP32)
        # branches yield different buffers: the joined value gets a signal of its own
        if flag:
            x = pl.yield_(a)
        else:
            x = pl.yield_(b)
        x = pld.tensor.allreduce(x)
        # both branches yield views of a_buf: the joined value shares a_buf's signal
        if flag:
            y = pl.yield_(a)
        else:
            y = pl.yield_(pld.window(a_buf, [64], dtype=pl.FP32))
        y = pld.tensor.allreduce(y)
        a = pld.tensor.allreduce(a)
        # no else: the value before the if is one of the incoming values
        c = a
        if flag:
            c = b
        c = pld.tensor.allreduce(c)
        # loop: init value and yielded value both come from b_buf
        for i, (acc,) in pl.range(4, init_values=(b,)):
            acc = pld.tensor.allreduce(acc)
            acc_out = pl.yield_(acc)
        acc_out = pld.tensor.allreduce(acc_out)
        return acc_out
