"""Every pld collective and one-sided op of pypto's host runtime, one result row each
(tests/host/test_ops.py checks the rows; test_mpi.py runs it under mpiexec)."""

import pypto.language as pl
import pypto.language.distributed as pld

S = 8


@pl.program
class PldOps:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        me = pld.system.rank()
        nr = pld.world_size()
        nxt = (me + 1) % nr
        sig_buf = pld.alloc_window_buffer([nr], dtype=pl.INT32)
        sig = pld.window(sig_buf, [nr], dtype=pl.INT32)
        res_buf = pld.alloc_window_buffer([10, S], dtype=pl.FP32)
        res = pld.window(res_buf, [10, S], dtype=pl.FP32)
        stage_buf = pld.alloc_window_buffer(S * pl.FP32.get_byte())
        stage = pld.window(stage_buf, [1, S], dtype=pl.FP32)
        for i in pl.range(S):
            stage[0, i] = me * 10 + i
        gath_buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        gath = pld.window(gath_buf, [nr, S], dtype=pl.FP32)
        gath = pld.tensor.allgather(stage, gath, sig)
        res[0, 0:S] = pl.slice(gath, [1, S], [nxt, 0])
        bc_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        bc = pld.window(bc_buf, [1, S], dtype=pl.FP32)
        if me == nr - 1:
            bc = pl.store(pl.tile.full([1, S], dtype=pl.FP32, value=7), [0, 0], bc)
        bc = pld.tensor.broadcast(bc, sig, root=nr - 1)
        res[1, 0:S] = pl.load(bc, [0, 0], [1, S])
        rs_buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        rs = pld.window(rs_buf, [nr, S], dtype=pl.FP32)
        for j in pl.range(nr):
            for i in pl.range(S):
                rs[j, i] = me + j * i
        rs = pld.tensor.reduce_scatter(rs, sig, op=pld.ReduceOp.Sum)
        res[2, 0:S] = pl.slice(rs, [1, S], [me, 0])
        a2a_in_buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        a2a_in = pld.window(a2a_in_buf, [nr, S], dtype=pl.FP32)
        a2a_buf = pld.alloc_window_buffer([nr, S], dtype=pl.FP32)
        a2a = pld.window(a2a_buf, [nr, S], dtype=pl.FP32)
        for d in pl.range(nr):
            for i in pl.range(S):
                a2a_in[d, i] = me * 100 + d * 10 + i
        a2a = pld.tensor.all_to_all(a2a_in, a2a, sig)
        res[3, 0:S] = pl.slice(a2a, [1, S], [nxt, 0])
        v_in_buf = pld.alloc_window_buffer([nr * 2, S], dtype=pl.FP32)
        v_in = pld.window(v_in_buf, [nr * 2, S], dtype=pl.FP32)
        v_out_buf = pld.alloc_window_buffer([nr * 2, S], dtype=pl.FP32)
        v_out = pld.window(v_out_buf, [nr * 2, S], dtype=pl.FP32)
        send_buf = pld.alloc_window_buffer([nr], dtype=pl.INT32)
        send = pld.window(send_buf, [nr], dtype=pl.INT32)
        recv_buf = pld.alloc_window_buffer([nr, 1], dtype=pl.INT32)
        recv = pld.window(recv_buf, [nr, 1], dtype=pl.INT32)
        for d in pl.range(nr):
            send[d] = (me + d) % 3
            for i in pl.range(S):
                v_in[d * 2, i] = me * 100 + d
                v_in[d * 2 + 1, i] = me * 100 + d + 0.5
        v_out = pld.tensor.all_to_all_v(v_in, v_out, sig, send, recv)
        res[4, 0:S] = pl.slice(v_out, [1, S], [nxt * 2 + 1, 0])
        for d in pl.range(nr):
            res[5, d] = recv[d, 0]
        pdst_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        pdst = pld.window(pdst_buf, [1, S], dtype=pl.FP32)
        pld.tensor.put(pdst, nxt, stage)
        sig = pld.tensor.barrier(sig)
        res[6, 0:S] = pl.load(pdst, [0, 0], [1, S])
        gdst_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        gdst = pld.window(gdst_buf, [1, S], dtype=pl.FP32)
        pld.tensor.get(gdst, nxt, stage)
        res[7, 0:S] = pl.load(gdst, [0, 0], [1, S])
        nsig_buf = pld.alloc_window_buffer([nr], dtype=pl.INT32)
        nsig = pld.window(nsig_buf, [nr], dtype=pl.INT32)
        pld.system.notify(nsig, nxt, [me], me + 1, op=pld.NotifyOp.Set)
        pld.system.wait(nsig, [(me + nr - 1) % nr], 1, cmp=pld.WaitCmp.Ge)
        res[8, 0] = nsig[(me + nr - 1) % nr]
        rl_buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        rl = pld.window(rl_buf, [1, S], dtype=pl.FP32)
        tile = pld.tile.remote_load(gath, nxt, [nxt, 0], [1, S])
        pld.tile.remote_store(tile, rl, nxt, [0, 0], atomic=pld.AtomicType.Add)
        pld.tile.remote_store(tile, rl, me, [0, 0], atomic=pld.AtomicType.Add)
        sig = pld.tensor.barrier(sig)
        res[9, 0:S] = pl.load(rl, [0, 0], [1, S])
        return res
